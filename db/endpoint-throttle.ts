// Tables: webhook_endpoint_send_slots, webhook_deliveries (a throttled delivery's due time).
// The per-endpoint throttle (docs/webhooks.md "Throttle"): one window of send slots per endpoint,
// shared by every worker, that activities/webhook-delivery.ts claims before each attempt.
import { DRIVER_RUN_BUDGET_MS } from './webhooks.js';
import type { Pool, PoolClient } from './pool.js';

type Db = Pool | PoolClient;

/**
 * The per-endpoint throttle (docs/webhooks.md "Throttle"): claims the endpoint's next free send time,
 * `greatest(now, next_at)`, and moves `next_at` 1/rate past it, in one atomic upsert, so every worker
 * process shares one window per endpoint (the database's clock, not the workers', decides). A slot
 * more than `maxWaitMs` away is not claimed: `granted` is false and `waitMs` says how far the next
 * free slot is, so the caller can come back later instead of holding its run.
 */
export async function claimSendSlot(
  db: Db,
  endpointId: string,
  ratePerSecond: number,
  maxWaitMs: number,
): Promise<{ granted: boolean; waitMs: number }> {
  const gapMs = 1000 / ratePerSecond;
  const { rows } = await db.query<{ wait_ms: number }>({
    name: 'webhook-send-slot-claim',
    text: `INSERT INTO webhook_endpoint_send_slots AS s (endpoint_id, next_at)
           VALUES ($1, clock_timestamp() + $2::double precision * interval '1 millisecond')
           ON CONFLICT (endpoint_id) DO UPDATE
              SET next_at = greatest(clock_timestamp(), s.next_at) + $2::double precision * interval '1 millisecond'
            WHERE s.next_at <= clock_timestamp() + $3::double precision * interval '1 millisecond'
           RETURNING (1000 * extract(epoch FROM s.next_at - $2::double precision * interval '1 millisecond' - clock_timestamp()))::float8 AS wait_ms`,
    values: [endpointId, gapMs, maxWaitMs],
  });
  if (rows[0]) return { granted: true, waitMs: Math.max(0, rows[0].wait_ms) };
  const next = await db.query<{ wait_ms: number }>(
    `SELECT (1000 * extract(epoch FROM next_at - clock_timestamp()))::float8 AS wait_ms FROM webhook_endpoint_send_slots WHERE endpoint_id = $1`,
    [endpointId],
  );
  return { granted: false, waitMs: Math.max(0, next.rows[0]?.wait_ms ?? 0) };
}

/**
 * A delivery whose run ends without an attempt (a throttled one whose slot was too far away, or a run
 * that came before its retry was due, activities/webhook-delivery.ts): its driver comes back after
 * `delayMs`, so the reconciler must not think it orphaned before then + the run budget, and no
 * attempt is in flight (the claim may have marked the one the run meant to send: a replay taking
 * the delivery over meanwhile must not count it as made).
 */
export async function deferDelivery(db: Db, eventId: string, endpointId: string, driver: string, delayMs: number): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET driver_due_at = now() + ($4::bigint + $5) * interval '1 millisecond', sending_attempt = NULL
      WHERE event_id = $1 AND endpoint_id = $2 AND driver = $3`,
    [eventId, endpointId, driver, Math.round(delayMs), DRIVER_RUN_BUDGET_MS],
  );
}
