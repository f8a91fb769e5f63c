// Tables: webhook_endpoints (the failing streak and the pause), webhook_events and
// webhook_deliveries (the webhook_endpoint.disabled event and its deliveries).
// Endpoint health (docs/webhooks.md "Auto-disable"): the failing streak a failed attempt records,
// and the pause of an endpoint activities/webhook-delivery.ts judged failing long enough, with the
// event that tells the issuer's other endpoints. A success ends the streak in db/webhooks.ts
// recordDeliveryAttempt's statement.
import { TEST_EVENT_DISPATCH_ID } from '../domain/sample-event.js';
import { buildEndpointDisabledBody } from '../domain/webhook-payload.js';
import { newId } from './ids.js';
import type { Pool, PoolClient } from './pool.js';

type Db = Pool | PoolClient;

/** An endpoint auto-disabled by pauseFailingEndpoint, and the webhook_endpoint.disabled deliveries it made (to start). */
export interface EndpointAutoDisabled {
  endpointId: string;
  disabledAt: Date;
  eventId: string;
  deliveries: Array<{ eventId: string; endpointId: string }>;
}

/** An endpoint's failing streak as a failed attempt leaves it. */
export interface FailingStreak {
  url: string;
  /** Temporal's time of the streak's first failed attempt. */
  since: Date;
  /** Already paused (by hand, or by an earlier attempt of the streak). */
  paused: boolean;
}

/**
 * Records a failed attempt in the endpoint's health (docs/webhooks.md "Auto-disable"): the first
 * failure since the last success starts the streak, storing both clocks. `at` (the attempt's wall
 * clock) is what `failing_since` stores, which the API and the dashboard show; `clock` is Temporal's
 * time of the attempt, stored in `failing_since_temporal`, on which the streak is measured (so the
 * time-skipping test server moves it). Undefined for a removed endpoint. A success ends the streak
 * in recordDeliveryAttempt's statement.
 */
export async function recordEndpointFailure(
  db: Db,
  input: { endpointId: string; at: Date; clock: Date },
): Promise<FailingStreak | undefined> {
  // SET reads the columns' old values: the first failure records both clocks.
  const { rows } = await db.query<{ url: string; failing_since_temporal: Date; paused: boolean }>(
    `UPDATE webhook_endpoints
        SET failing_since = coalesce(failing_since, $2),
            failing_since_temporal = CASE WHEN failing_since IS NULL THEN $3 ELSE failing_since_temporal END
      WHERE id = $1 AND disabled_at IS NULL
     RETURNING url, failing_since_temporal, paused_at IS NOT NULL AS paused`,
    [input.endpointId, input.at, input.clock],
  );
  const row = rows[0];
  return row && { url: row.url, since: row.failing_since_temporal, paused: row.paused };
}

/**
 * Pauses an endpoint whose failing streak the caller judged long enough, with the reason `failing`,
 * and in the same statement stores the `webhook_endpoint.disabled` event with one pending delivery
 * to each of the issuer's other enabled endpoints of that mode that subscribe to it (the caller
 * starts them; the reconciler would otherwise). Only while it is still the streak that was judged
 * (a success in between ended it) and nobody paused it first; undefined otherwise.
 */
export async function pauseFailingEndpoint(
  db: Db,
  input: { endpointId: string; streak: FailingStreak; disabledAt: Date },
): Promise<EndpointAutoDisabled | undefined> {
  const eventId = newId('evt');
  const timestamp = input.disabledAt.toISOString();
  const body = buildEndpointDisabledBody(timestamp, { id: input.endpointId, url: input.streak.url, disabled_reason: 'failing', disabled_at: timestamp }); // prettier-ignore
  const { rows } = await db.query<{ disabled: boolean; endpoint_ids: string[] }>(
    `WITH disabled AS (
       UPDATE webhook_endpoints SET paused_at = $2, paused_reason = 'failing'
        WHERE id = $1 AND paused_at IS NULL AND disabled_at IS NULL AND failing_since_temporal = $3
       RETURNING issuer_id, mode
     ), event AS (
       INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body)
       SELECT $4, $5, issuer_id, mode, 'webhook_endpoint.disabled', $2, $6 FROM disabled
       RETURNING id, issuer_id, mode
     ), deliveries AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id)
       SELECT event.id, e.id FROM event
         JOIN webhook_endpoints e ON e.issuer_id = event.issuer_id AND e.mode = event.mode AND e.id <> $1
                                 AND e.disabled_at IS NULL AND e.paused_at IS NULL AND 'webhook_endpoint.disabled' = ANY (e.events)
       RETURNING endpoint_id
     )
     SELECT EXISTS (SELECT 1 FROM disabled) AS disabled,
            coalesce((SELECT array_agg(endpoint_id ORDER BY endpoint_id) FROM deliveries), '{}') AS endpoint_ids`,
    [input.endpointId, input.disabledAt, input.streak.since, eventId, TEST_EVENT_DISPATCH_ID, Buffer.from(body, 'utf8')],
  );
  if (!rows[0]?.disabled) return undefined;
  return {
    endpointId: input.endpointId,
    disabledAt: input.disabledAt,
    eventId,
    deliveries: rows[0].endpoint_ids.map((endpointId) => ({ eventId, endpointId })),
  };
}
