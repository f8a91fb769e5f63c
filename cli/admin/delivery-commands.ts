// `deliveries list`: the webhook delivery log as an operator reads it (docs/admin-cli.md "Operator CLI"): one row per
// (webhook event, endpoint) with its state (pending, delivered, undeliverable, skipped), attempts and
// last attempt time. `deliveries replay`: one event again, or an endpoint's events of a time range,
// through a paged redelivery workflow on the service's task queue (same signing, same retry
// schedule; ingest/webhook-replays.ts, shared with the dashboard); `deliveries replay-status` its progress.
import type { Command } from 'commander';
import { z } from 'zod';
import { eventDeliveries, getReplay, webhookEventExists, type ReplayFilter, type ReplayProgress } from '../../db/webhook-replays.js';
import { listDeliveries } from '../../db/delivery-summaries.js';
import { endpointExists } from '../../db/webhook-endpoints.js';
import { loadConfig } from '../../platform/config.js';
import { CliError, connectTemporal, iso, output, parseOptions, requireWorker, table, wholeNumberOption, withDatabase } from './context.js';

const listOptions = z.object({
  undeliverable: z.boolean().optional(),
  endpoint: z.string().trim().min(1, 'must not be empty').optional(),
  limit: wholeNumberOption(1, 1000).default(100),
});

/** The options of `deliveries replay` (exported for test/cli/replay-range.unit.test.ts). */
export const replayOptions = z
  .object({
    eventId: z.string().trim().min(1).optional(),
    endpoint: z.string().trim().min(1).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
    wait: z.boolean().optional(),
  })
  .refine((o) => (o.eventId !== undefined) !== (o.endpoint !== undefined), {
    message: 'give either --event-id, or --endpoint with --since and --until',
  })
  // Instants, not strings: 10:00+05:00 is before 06:00Z, and 06:00:00.5Z after 06:00:00Z.
  .refine(
    (o) => o.endpoint === undefined || (o.since !== undefined && o.until !== undefined && Date.parse(o.since) < Date.parse(o.until)),
    {
      message: '--endpoint needs --since and --until (ISO 8601 timestamps, since before until)',
    },
  );

export function registerDeliveryCommands(program: Command): void {
  const deliveries = program.command('deliveries').description('inspect webhook deliveries');

  deliveries
    .command('list')
    .description('list webhook deliveries, newest first')
    .option('--undeliverable', 'only deliveries that exhausted their retries')
    .option('--endpoint <id>', 'only deliveries to this endpoint (whe_…)')
    .option('--limit <n>', 'at most this many rows (1–1000)', '100')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(listOptions, raw);
      const rows = await withDatabase(async (db) => {
        // A mistyped endpoint id must not read as an endpoint without deliveries (a removed one still lists its own).
        if (options.endpoint !== undefined && !(await endpointExists(db, options.endpoint)))
          throw new CliError(`unknown webhook endpoint: ${options.endpoint}`);
        // One more than asked: whether the list is cut, so that it never reads as all there is.
        return listDeliveries(db, { undeliverable: options.undeliverable, endpointId: options.endpoint, limit: options.limit + 1 });
      });
      if (rows.length > options.limit) {
        rows.length = options.limit;
        process.stderr.write(`note: the newest ${options.limit} deliveries listed; more match (--limit up to 1000)\n`);
      }
      const data = rows.map((d) => ({
        event_id: d.eventId,
        endpoint_id: d.endpointId,
        event: d.event,
        state: d.state,
        attempts: d.attempts,
        last_attempt_at: iso(d.lastAttemptAt),
      }));
      output(command, { data }, () => {
        if (data.length === 0) return 'No deliveries.';
        return table(
          ['EVENT', 'ENDPOINT', 'TYPE', 'STATE', 'ATTEMPTS', 'LAST ATTEMPT'],
          data.map((d) => [d.event_id, d.endpoint_id, d.event, d.state, String(d.attempts), d.last_attempt_at ?? '-']),
        );
      });
    });

  deliveries
    .command('replay')
    .description('deliver again one webhook event, or an endpoint’s events created in [since, until), page by page')
    .option('--event-id <id>', 'the event to deliver again (evt_…), to every endpoint it went to')
    .option('--endpoint <id>', 'with --since/--until: recover this endpoint’s events of a time range')
    .option('--since <iso>', 'start of the range (inclusive)')
    .option('--until <iso>', 'end of the range (exclusive)')
    .option('--wait', 'wait until every replayed delivery has settled and print the totals')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(replayOptions, raw);
      const filter: ReplayFilter = options.eventId
        ? { eventId: options.eventId }
        : { endpointId: options.endpoint!, since: new Date(options.since!), until: new Date(options.until!) };
      const config = loadConfig();
      await withDatabase(async (pool) => {
        // A mistyped id must not read as one with nothing to replay; checked before Temporal is reached.
        if (options.endpoint !== undefined && !(await endpointExists(pool, options.endpoint)))
          throw new CliError(`unknown webhook endpoint: ${options.endpoint}`);
        if (options.eventId !== undefined && !(await webhookEventExists(pool, options.eventId)))
          throw new CliError(`unknown webhook event: ${options.eventId}`);
        const { temporal, taskQueue, close } = await connectTemporal(config);
        try {
          // Its redelivery workflow is the worker's: without one, --wait would wait for ever.
          await requireWorker(temporal, taskQueue);
          const { replayDeliveries } = await import('../../ingest/webhook-replays.js');
          const replay = await replayDeliveries({ pool, temporal, taskQueue }, filter);
          if (!replay) throw new CliError('nothing to replay: no delivery matches (or its endpoint was removed or disabled)');
          if (options.wait) await replay.handle.result();
          const progress = (await getReplay(pool, replay.id))!;
          // One event: its deliveries, with their outcome once settled (a range is reported by its totals only).
          const data = options.eventId
            ? (await eventDeliveries(pool, options.eventId)).map((d) => ({
                event_id: d.eventId,
                endpoint_id: d.endpointId,
                ...(options.wait ? { outcome: d.state, attempts: d.attempts } : {}),
              }))
            : undefined;
          output(command, { ...progressJson(progress), ...(data ? { data } : {}) }, () =>
            [
              progressLine(progress),
              ...(data ?? []).map((d) => `  ${d.event_id} → ${d.endpoint_id}${'outcome' in d ? `: ${d.outcome}` : ''}`),
            ].join('\n'),
          );
        } finally {
          await close();
        }
      });
    });

  deliveries
    .command('replay-status')
    .description('the progress of a replay: deliveries matched, sent, delivered, failed')
    .requiredOption('--id <id>', 'the replay id (replay-…) that `deliveries replay` printed')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(z.object({ id: z.string().trim().min(1, 'must not be empty') }), raw);
      const progress = await withDatabase((pool) => getReplay(pool, options.id));
      if (!progress) throw new CliError(`unknown replay: ${options.id}`);
      output(command, progressJson(progress), () => progressLine(progress));
    });
}

function progressJson(p: ReplayProgress) {
  return {
    id: p.id,
    endpoint_id: p.endpointId,
    event_id: p.eventId,
    status: p.status,
    total: p.total,
    sent: p.sent,
    delivered: p.delivered,
    failed: p.failed,
    skipped: p.skipped,
    created_at: iso(p.createdAt),
    completed_at: iso(p.completedAt),
  };
}

function progressLine(p: ReplayProgress): string {
  const what = p.status === 'running' ? 'running' : p.status;
  return `Replay ${p.id} ${what}: ${p.total} matched, ${p.sent} sent (${p.delivered} delivered, ${p.failed} failed, ${p.skipped} skipped).`;
}
