// `deliveries list`: the webhook delivery log as an operator reads it (DESIGN.md §4): one row per
// (webhook event, endpoint) with its state (pending, delivered, undeliverable, skipped), attempts and
// last attempt time. Replay needs the workflow side and is not here yet.
import type { Command } from 'commander';
import { z } from 'zod';
import { listDeliveries } from '../../db/webhooks.js';
import { iso, output, parseOptions, table, withDatabase } from './context.js';

const listOptions = z.object({
  undeliverable: z.boolean().optional(),
  endpoint: z.string().trim().min(1, 'must not be empty').optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

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
      const rows = await withDatabase((db) =>
        listDeliveries(db, { undeliverable: options.undeliverable, endpointId: options.endpoint, limit: options.limit }),
      );
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
}
