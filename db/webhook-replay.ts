// Replay of webhook deliveries an operator or an issuer asks for (`deliveries replay`, the
// dashboard's delivery log): the chosen deliveries go back to pending with their attempt count
// reset, and the caller starts a redelivery workflow for exactly the pairs returned
// (api/redelivery.ts). Deliveries of any state qualify: recovering a range is also how a consumer
// gets back events it acknowledged and then lost, or missed while its endpoint was disabled.
// Removed and disabled (paused) endpoints are left out: nothing would be sent to them.
import type { Pool, PoolClient } from './pool.js';

/** One event (to every endpoint it went to, or only to `endpointId`), or an endpoint's events created in [since, until). */
export type ReplayFilter = { eventId: string; endpointId?: string } | { endpointId: string; since: Date; until: Date };

export async function resetDeliveriesForReplay(
  db: Pool | PoolClient,
  filter: ReplayFilter,
): Promise<Array<{ eventId: string; endpointId: string }>> {
  const byEvent = 'eventId' in filter;
  const { rows } = await db.query<{ event_id: string; endpoint_id: string }>(
    `UPDATE webhook_deliveries AS d
        SET state = 'pending', attempts = 0, skipped_reason = NULL
       FROM webhook_events ev, webhook_endpoints e
      WHERE ev.id = d.event_id AND e.id = d.endpoint_id AND e.disabled_at IS NULL AND e.paused_at IS NULL
        AND ${byEvent ? 'd.event_id = $1 AND ($2::text IS NULL OR d.endpoint_id = $2)' : 'd.endpoint_id = $1 AND ev.created_at >= $2 AND ev.created_at < $3'}
      RETURNING d.event_id, d.endpoint_id`,
    byEvent ? [filter.eventId, filter.endpointId ?? null] : [filter.endpointId, filter.since, filter.until],
  );
  return rows
    .map((row) => ({ eventId: row.event_id, endpointId: row.endpoint_id }))
    .sort((a, b) => a.eventId.localeCompare(b.eventId) || a.endpointId.localeCompare(b.endpointId));
}
