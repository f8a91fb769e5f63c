// Tables: webhook_events and delivery_attempts (payloads cleared), transit_history and tracking_links
// (old rows deleted), dispatches (the completed ones due for erasure, read only: db/erasure.ts erases).
// The SQL of the retention sweep (docs/privacy.md "What is kept, and for how long";
// activities/retention.ts drives it): each function does one bounded batch, oldest first, and skips
// rows another sweep holds (SKIP LOCKED), so two sweeps at once share the work instead of waiting.
import { utcMicroseconds } from './creation-cursor.js';
import type { Pool, PoolClient } from './pool.js';

type Db = Pool | PoolClient;

/** What an attempt's error text becomes when its payload expires: the outcome stays readable, the detail goes. */
const EXPIRED_ERROR = `CASE WHEN a.error IS NULL THEN NULL WHEN a.status_code IS NOT NULL THEN 'HTTP ' || a.status_code
  ELSE 'network error (detail expired)' END`;

/**
 * Clears the payload of up to `limit` webhook events older than `windowMs` whose deliveries have all
 * settled (none pending, none attempted within the window): the body becomes empty and
 * `payload_expired_at` is set; their attempts lose their request headers, response head and error
 * text. Ids, types, times, status codes and outcomes stay, so the delivery log still reads.
 * One statement: an event and its attempts are cleared together or not at all.
 */
export async function clearSettledPayloads(db: Db, options: { windowMs: number; limit: number }): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH due AS (
       SELECT ev.id FROM webhook_events ev
        WHERE ev.payload_expired_at IS NULL AND ev.created_at < now() - $1 * interval '1 millisecond'
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                           WHERE d.event_id = ev.id
                             AND (d.state = 'pending' OR d.last_attempt_at >= now() - $1 * interval '1 millisecond'))
        ORDER BY ev.created_at
        LIMIT $2
        FOR UPDATE OF ev SKIP LOCKED
     ), attempts AS (
       UPDATE delivery_attempts a SET request_headers = NULL, response_head = NULL, error = ${EXPIRED_ERROR}
        WHERE a.event_id IN (SELECT id FROM due)
     ), events AS (
       UPDATE webhook_events ev SET body = '\\x'::bytea, payload_expired_at = now()
        WHERE ev.id IN (SELECT id FROM due)
        RETURNING 1
     )
     SELECT count(*)::int AS n FROM events`,
    [options.windowMs, options.limit],
  );
  return rows[0].n;
}

/** Deletes up to `limit` transit history rows delivered more than `windowMs` ago (imported ones too). */
export async function deleteOldTransitHistory(db: Db, options: { windowMs: number; limit: number }): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM transit_history WHERE id IN (
       SELECT id FROM transit_history WHERE delivered_date < (now() - $1 * interval '1 millisecond')::date
        ORDER BY delivered_date LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [options.windowMs, options.limit],
  );
  return rowCount ?? 0;
}

/** How long an expired tracking link is kept (its page answers "expired" meanwhile) before it is deleted. */
export const EXPIRED_LINK_KEPT_MS = 30 * 86_400_000;

/** Deletes up to `limit` tracking links that expired more than 30 days ago; their gate rows go with them (ON DELETE CASCADE). */
export async function deleteExpiredTrackingLinks(db: Db, options: { limit: number }): Promise<number> {
  // With them, up to as many token hashes of erased dispatches' links past the same time, and of
  // erased dispatches' tracking numbers past their 30 days: the sum is under `limit` only once all are drained.
  const { rows } = await db.query<{ deleted: number }>(
    `WITH links AS (
       DELETE FROM tracking_links WHERE id IN (
         SELECT id FROM tracking_links WHERE expires_at < now() - $1 * interval '1 millisecond'
          ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING 1
     ), erased AS (
       DELETE FROM erased_tracking_links WHERE token_hash IN (
         SELECT token_hash FROM erased_tracking_links WHERE expires_at < now() - $1 * interval '1 millisecond'
          ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING 1
     ), numbers AS (
       DELETE FROM erased_tracking_numbers WHERE (issuer_id, mode, number_hash) IN (
         SELECT issuer_id, mode, number_hash FROM erased_tracking_numbers WHERE expires_at < now()
          ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING 1
     )
     SELECT ((SELECT count(*) FROM links) + (SELECT count(*) FROM erased) + (SELECT count(*) FROM numbers))::int AS deleted`,
    [EXPIRED_LINK_KEPT_MS, options.limit],
  );
  return rows[0].deleted;
}

/** A position in the walk over resting dispatches (their last change, then id). */
export interface DispatchCursor {
  updatedAt: string;
  id: string;
}

/**
 * Up to `limit` dispatches resting (delivered or in exception) whose last change (a carrier event,
 * or turning overdue) and last carrier event are older than `windowMs`, and older than their workflow's own retention, so
 * that its run has completed; after `after`, oldest first. The caller confirms with Temporal that
 * no run is open before erasing (activities/retention.ts).
 */
export async function findDispatchesDue(
  db: Db,
  options: { windowMs: number; deliveredRetentionMs: number; exceptionRetentionMs: number; limit: number; after?: DispatchCursor },
): Promise<{ ids: string[]; next?: DispatchCursor }> {
  // The walk reads dispatches_resting_updated_idx in its order: ORDER BY names the columns (d.…), not
  // the to_char output of the same name, which made every batch sort all resting dispatches; and the
  // shortest of the windows bounds the index range, so the last batch does not read every recently
  // resting dispatch (test/db/retention-due-plan.test.ts).
  const { rows } = await db.query<{ id: string; cursor_at: string }>(
    `SELECT d.id, ${utcMicroseconds('d.updated_at')} AS cursor_at
       FROM dispatches d
      WHERE d.status IN ('delivered', 'exception')
        AND d.updated_at < now() - greatest($1::bigint, least($2::bigint, $3::bigint)) * interval '1 millisecond'
        AND d.updated_at < now() - greatest($1::bigint, CASE d.status WHEN 'delivered' THEN $2::bigint ELSE $3::bigint END) * interval '1 millisecond'
        AND ($5::timestamptz IS NULL OR (d.updated_at, d.id) > ($5, $6::uuid))
        -- The window runs from its last carrier event, and one after its last change (a late scan
        -- after delivery changes nothing) counts too: one probe of carrier_events_dispatch_received_idx.
        AND NOT EXISTS (SELECT 1 FROM carrier_events ce
                         WHERE ce.dispatch_id = d.id AND ce.received_at >= now() - $1::bigint * interval '1 millisecond')
      ORDER BY d.updated_at, d.id
      LIMIT $4`,
    [
      options.windowMs,
      options.deliveredRetentionMs,
      options.exceptionRetentionMs,
      options.limit,
      options.after?.updatedAt ?? null,
      options.after?.id ?? null,
    ],
  );
  const last = rows.at(-1);
  return {
    ids: rows.map((row) => row.id),
    next: last && rows.length === options.limit ? { updatedAt: last.cursor_at, id: last.id } : undefined,
  };
}
