// `webhook disable|enable`: pausing a webhook endpoint by hand and enabling it again (docs/runbook.md
// "A consumer endpoint down"), through the statements of PATCH /v1/webhook_endpoints/{id} with
// `disabled` (db/webhook-endpoint-settings.ts), so both behave alike: disabling keeps an earlier
// reason and time (an auto-disabled endpoint stays `failing`); enabling clears failing_since and
// reports what the endpoint missed, as the API's `missed`. With --replay-missed that range goes
// through the paged replay of `deliveries replay --endpoint` (ingest/webhook-replays.ts), as the API's
// POST …/replay does. Registered under `webhook` by webhook-commands.ts.
import type { Command } from 'commander';
import { z } from 'zod';
import type { Pool } from '../../db/pool.js';
import {
  findEndpointScope,
  findEndpointSettings,
  missedDeliveries,
  missedFrom,
  updateEndpointSettings,
  type EndpointSettings,
} from '../../db/webhook-endpoint-settings.js';
import { loadConfig } from '../../platform/config.js';
import { CliError, connectTemporal, iso, output, parseOptions, requireWorker, withDatabase } from './context.js';

const id = z.string().trim().min(1, 'must not be empty');
const disableOptions = z.object({ id });
const enableOptions = z.object({ id, replayMissed: z.boolean().optional() });

const unknownEndpoint = (endpointId: string) => new CliError(`unknown webhook endpoint: ${endpointId}`);

/** The endpoint's state as the API names it (`disabled`, `disabled_reason`, `disabled_at`). */
function stateJson(endpoint: EndpointSettings) {
  return {
    id: endpoint.id,
    disabled: endpoint.pausedAt !== null,
    disabled_reason: endpoint.pausedReason,
    disabled_at: iso(endpoint.pausedAt),
  };
}

/** Pauses (true) or enables (false) an endpoint known by id alone; its state before and after. */
async function setDisabled(db: Pool, endpointId: string, disabled: boolean) {
  const scope = await findEndpointScope(db, endpointId);
  const before = scope && (await findEndpointSettings(db, scope.issuerId, scope.mode, endpointId));
  const after = scope && before && (await updateEndpointSettings(db, scope.issuerId, scope.mode, endpointId, { paused: disabled }));
  // Removed between the statements: as unknown as it would be a moment later.
  if (!before || !after) throw unknownEndpoint(endpointId);
  return { before, after };
}

/**
 * A Temporal client for the replay, with a worker on its task queue (the replay is the worker's), checked
 * before anything changes so that a failure changes nothing.
 */
async function connectForReplay() {
  const [{ temporal, taskQueue, close }, { replayDeliveries }] = await Promise.all([
    connectTemporal(loadConfig()),
    import('../../ingest/webhook-replays.js'),
  ]);
  try {
    await requireWorker(temporal, taskQueue);
  } catch (error) {
    await close();
    throw error;
  }
  return { temporal, close, replayDeliveries, taskQueue };
}

export function addDisableEnableCommands(webhook: Command): void {
  webhook
    .command('disable')
    .description('pause a webhook endpoint: its new events are skipped (replayable later), nothing is removed')
    .requiredOption('--id <id>', 'the endpoint id (whe_…)')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(disableOptions, raw);
      const { before, after } = await withDatabase((db) => setDisabled(db, options.id, true));
      const json = stateJson(after);
      output(command, json, () =>
        before.pausedAt
          ? `Webhook endpoint ${after.id} was already disabled (${json.disabled_reason} since ${json.disabled_at}): nothing changed.`
          : `Disabled webhook endpoint ${after.id}: it gets no deliveries until enabled (webhook enable --id ${after.id}).`,
      );
    });

  webhook
    .command('enable')
    .description('enable a disabled (or auto-disabled) webhook endpoint and report what it missed meanwhile')
    .requiredOption('--id <id>', 'the endpoint id (whe_…)')
    .option('--replay-missed', 'also send what it missed (a replay of that range, as deliveries replay --endpoint)')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(enableOptions, raw);
      const result = await withDatabase(async (db) => {
        if (!(await findEndpointScope(db, options.id))) throw unknownEndpoint(options.id);
        const replaying = options.replayMissed ? await connectForReplay() : undefined;
        try {
          const { before, after } = await setDisabled(db, options.id, false);
          // As PATCH disabled: false answers: from its first failure (auto-disabled) or its pause, to now.
          const from = missedFrom(before);
          const until = new Date();
          const missed = from ? { ...(await missedDeliveries(db, after.id, from, until)), until } : undefined;
          const replay =
            replaying && missed && missed.count > 0
              ? await replaying.replayDeliveries(
                  { pool: db, temporal: replaying.temporal, taskQueue: replaying.taskQueue },
                  { endpointId: after.id, since: missed.since, until },
                )
              : undefined;
          return { after, missed, replay };
        } finally {
          await replaying?.close();
        }
      });
      const { after, missed, replay } = result;
      const json = {
        ...stateJson(after),
        missed: missed ? { since: missed.since.toISOString(), until: missed.until.toISOString(), count: missed.count } : null,
        // `total`: every delivery of that range (delivered ones too), as the API's replay counts them.
        replay: replay ? { id: replay.id, total: replay.total } : null,
      };
      output(command, json, () => {
        if (!json.missed) return `Webhook endpoint ${after.id} was not disabled: nothing changed.`;
        const { since, until, count } = json.missed;
        const lines = [`Enabled webhook endpoint ${after.id}.`, `${count} ${count === 1 ? 'delivery' : 'deliveries'} missed since ${since} (until ${until}).`]; // prettier-ignore
        if (json.replay)
          lines.push(
            `Replaying that range: ${json.replay.id} (${json.replay.total} deliveries); progress: npm run admin -- deliveries replay-status --id ${json.replay.id}`,
          );
        else if (count > 0)
          lines.push(`To send them: npm run admin -- deliveries replay --endpoint ${after.id} --since ${since} --until ${until}`);
        return lines.join('\n');
      });
    });
}
