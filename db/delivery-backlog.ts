// Tables: webhook_deliveries (read only). How many webhook deliveries are still pending, by how long
// ago they were created: the `cds_webhook_deliveries_pending{age}` gauge (platform/metrics.ts),
// read on each scrape. One statement over the pending rows only (the partial index
// webhook_deliveries_pending_due_idx covers `state = 'pending'`), so a scrape costs as much as
// the backlog is long, never the whole delivery history.
import type { Pool } from './pool.js';
import type { PendingAgeBand } from '../platform/metrics.js';

export async function countPendingDeliveriesByAge(pool: Pool): Promise<Record<PendingAgeBand, number>> {
  const { rows } = await pool.query<Record<PendingAgeBand, number>>({
    name: 'pending-deliveries-by-age',
    text: `SELECT count(*) FILTER (WHERE created_at > now() - interval '1 minute')::int AS under_1m,
                  count(*) FILTER (WHERE created_at <= now() - interval '1 minute' AND created_at > now() - interval '1 hour')::int AS "1m_to_1h",
                  count(*) FILTER (WHERE created_at <= now() - interval '1 hour' AND created_at > now() - interval '1 day')::int AS "1h_to_1d",
                  count(*) FILTER (WHERE created_at <= now() - interval '1 day')::int AS over_1d
             FROM webhook_deliveries
            WHERE state = 'pending'`,
  });
  return rows[0];
}
