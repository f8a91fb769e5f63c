// Tables: carrier_events (reads dispatches only for the dispatch date).
// The carrier event log, written by the API as each event arrives (before the workflow is
// signalled), so that no accepted event is lost and duplicates are recognised at the door; read
// back, with what the workflow did with each, by the dashboard's dispatch page.
import type { CarrierEventBody, ExceptionReason } from '../domain/schemas.js';
import type { EventEffect } from '../domain/state-machine.js';
import type { Pool } from './pool.js';

/**
 * Records the event; returns false when an event with the same dedupe key was already recorded.
 * The service's own events (the prediction refresh's `overdue`) are logged here too.
 */
export async function insertCarrierEvent(
  pool: Pool,
  dispatchId: string,
  dedupeKey: string,
  event: Omit<CarrierEventBody, 'reason'> & { reason?: ExceptionReason },
): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'carrier-event-insert',
    text: `INSERT INTO carrier_events (dispatch_id, dedupe_key, event_id, status, occurred_at, reason, location)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (dispatch_id, dedupe_key) DO NOTHING`,
    values: [dispatchId, dedupeKey, event.event_id ?? null, event.status, event.occurred_at, event.reason ?? null, event.location ?? null],
  });
  return rowCount === 1;
}

/**
 * Sets the effect of an event nobody else will judge, because its workflow has closed: `after_delivery`
 * (delivered), `workflow_closed` (terminated or failed undelivered, docs/states.md "Closed dispatches").
 */
export async function setCarrierEventEffect(
  pool: Pool,
  dispatchId: string,
  dedupeKey: string,
  effect: Extract<EventEffect, 'after_delivery'> | 'workflow_closed',
): Promise<void> {
  await pool.query({
    name: 'carrier-event-effect',
    text: 'UPDATE carrier_events SET effect = $3 WHERE dispatch_id = $1 AND dedupe_key = $2 AND effect IS NULL',
    values: [dispatchId, dedupeKey, effect],
  });
}

/** Records what the workflow did with each event it folded (applied, stale, …). */
export async function recordEventEffects(
  pool: Pool,
  dispatchId: string,
  effects: ReadonlyArray<{ dedupeKey: string; effect: string }>,
): Promise<void> {
  if (effects.length === 0) return;
  await pool.query({
    name: 'carrier-event-effects',
    text: `UPDATE carrier_events AS e SET effect = v.effect
             FROM unnest($2::text[], $3::text[]) AS v(dedupe_key, effect)
            WHERE e.dispatch_id = $1 AND e.dedupe_key = v.dedupe_key`,
    values: [dispatchId, effects.map((e) => e.dedupeKey), effects.map((e) => e.effect)],
  });
}

/**
 * The earliest `occurred_at` a new event can carry and still not be stale: the later of the
 * dispatch date and the latest event received (the current status was set by one of them).
 * Undefined when there is no such dispatch.
 */
export async function earliestFreshEventTime(pool: Pool, dispatchId: string): Promise<Date | undefined> {
  const { rows } = await pool.query<{ at: Date }>(
    `SELECT greatest(d.dispatch_date, (SELECT max(occurred_at) FROM carrier_events WHERE dispatch_id = d.id)) AS at
       FROM dispatches d WHERE d.id = $1`,
    [dispatchId],
  );
  return rows[0]?.at;
}

/** What the workflow did with an event (null until it has folded it); undefined when unknown. */
export async function carrierEventEffect(pool: Pool, dispatchId: string, dedupeKey: string): Promise<EventEffect | null | undefined> {
  const { rows } = await pool.query<{ effect: EventEffect | null }>(
    'SELECT effect FROM carrier_events WHERE dispatch_id = $1 AND dedupe_key = $2',
    [dispatchId, dedupeKey],
  );
  return rows[0]?.effect;
}

export interface LoggedCarrierEvent {
  receivedAt: Date;
  occurredAt: Date;
  status: string;
  reason: string | null;
  location: string | null;
  eventId: string | null;
  /** What the workflow did with it; null until it has folded the event. */
  effect: EventEffect | null;
}

/** Every carrier event recorded for the dispatch, in the order they arrived (for the dashboard). */
export async function listCarrierEvents(pool: Pool, dispatchId: string): Promise<LoggedCarrierEvent[]> {
  const { rows } = await pool.query(
    `SELECT received_at, occurred_at, status, reason, location, event_id, effect
       FROM carrier_events WHERE dispatch_id = $1 ORDER BY received_at, occurred_at`,
    [dispatchId],
  );
  return rows.map((row) => ({
    receivedAt: row.received_at,
    occurredAt: row.occurred_at,
    status: row.status,
    reason: row.reason,
    location: row.location,
    eventId: row.event_id,
    effect: row.effect,
  }));
}
