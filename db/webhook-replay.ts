// Replay of webhook deliveries an operator asks for (`deliveries replay`): the chosen deliveries go
// back to pending with their attempt count reset, and the caller starts a redelivery workflow for
// exactly the pairs returned. Deliveries of any state qualify: recovering a range is also how a
// consumer gets back events it acknowledged and then lost. Disabled or removed endpoints are left out.
import type { Pool, PoolClient } from './pool.js';

export type ReplayFilter = { eventId: string } | { endpointId: string; since: Date; until: Date };

export async function resetDeliveriesForReplay(
  db: Pool | PoolClient,
  filter: ReplayFilter,
): Promise<Array<{ eventId: string; endpointId: string }>> {
  const byEvent = 'eventId' in filter;
  const { rows } = await db.query<{ event_id: string; endpoint_id: string }>(
    `UPDATE webhook_deliveries AS d
        SET state = 'pending', attempts = 0, skipped_reason = NULL
       FROM webhook_events ev, webhook_endpoints e
      WHERE ev.id = d.event_id AND e.id = d.endpoint_id AND e.disabled_at IS NULL
        AND ${byEvent ? 'd.event_id = $1' : 'd.endpoint_id = $1 AND ev.created_at >= $2 AND ev.created_at < $3'}
      RETURNING d.event_id, d.endpoint_id`,
    byEvent ? [filter.eventId] : [filter.endpointId, filter.since, filter.until],
  );
  return rows
    .map((row) => ({ eventId: row.event_id, endpointId: row.endpoint_id }))
    .sort((a, b) => a.eventId.localeCompare(b.eventId) || a.endpointId.localeCompare(b.endpointId));
}
