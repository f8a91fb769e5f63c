// Tables: carrier_events (reads dispatches only for the dispatch date, erasures for a tombstone).
// The carrier event log, written by the API as each event arrives (before the workflow is
// signalled), so that no accepted event is lost and duplicates are recognised at the door; read
// back, with what the workflow did with each, by the dashboard's dispatch page and by
// GET /v1/dispatches/{id}/events (a page at a time).
import { createHash } from 'node:crypto';
import type { CarrierVocabulary } from '../domain/carrier-vocabularies.js';
import type { CarrierEventBody } from '../domain/carrier-event-schemas.js';
import type { FeedProvider } from '../domain/tracking-feeds/provider.js';
import type { EventEffect, ExceptionReason } from '../domain/vocabulary.js';
import { creationCursors, utcMicroseconds } from './creation-cursor.js';
import type { Pool } from './pool.js';

/**
 * The status exactly as a carrier sent it in its own vocabulary (domain/carrier-vocabularies.ts), or
 * as a tracking feed's provider did (domain/tracking-feeds/): with its sub-status, and the
 * checkpoint's time string as the provider gave it (docs/tracking-feeds.md "Times").
 */
export interface VocabularyStatus {
  vocabulary: Exclude<CarrierVocabulary, 'service'> | FeedProvider;
  status: string;
  substatus?: string;
  time?: string;
}

/** One event to record: its dedupe key, the event in the service's vocabulary, and what the carrier sent. */
export interface CarrierEventRecord {
  dedupeKey: string;
  event: Omit<CarrierEventBody, 'reason'> & { reason?: ExceptionReason };
  original?: VocabularyStatus;
}

/**
 * Records several events of one dispatch in ONE statement (a multi-row insert), in the order given:
 * for each, `inserted`, or `duplicate` when an event with the same dedupe key was already recorded
 * (before, or earlier in the same list); or `erased`, for all of them, when the dispatch has a
 * tombstone (its erasure requested or done): then nothing is recorded, whatever facts an API
 * process still holds (ingest/carrier-events.ts). The service's own events (the prediction
 * refresh's `overdue`) are logged here too. `status` and `reason` are the service's (what the
 * workflow acts on); `original` keeps a carrier vocabulary's status as it was sent. The rows of one
 * statement share its transaction's now(): each row's received_at is it plus its position in
 * microseconds, so that the log's arrival order (received_at, then dedupe key) stays the list's.
 */
export async function recordCarrierEvents(
  pool: Pool,
  dispatchId: string,
  events: readonly CarrierEventRecord[],
): Promise<'erased' | Array<'inserted' | 'duplicate'>> {
  if (events.length === 0) return [];
  const column = <T>(pick: (record: CarrierEventRecord) => T | undefined) => events.map((record) => pick(record) ?? null);
  const { rows } = await pool.query<{ erased: boolean; inserted: string[] }>({
    name: 'carrier-events-insert-v5',
    text: `WITH erased AS (SELECT 1 FROM erasures WHERE dispatch_id = $1::uuid),
                given AS (
                  SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[],
                                       $9::text[], $10::text[], $11::text[]) WITH ORDINALITY
                           AS g(dedupe_key, event_id, status, occurred_at, reason, location, vocabulary, vocabulary_status,
                                vocabulary_substatus, original_time, position)),
                inserted AS (
                  INSERT INTO carrier_events (dispatch_id, dedupe_key, event_id, status, occurred_at, reason, location, vocabulary, vocabulary_status,
                                              vocabulary_substatus, original_time, received_at)
                  SELECT $1::uuid, dedupe_key, event_id, status, occurred_at, reason, location, vocabulary, vocabulary_status,
                         vocabulary_substatus, original_time, now() + (position - 1) * interval '1 microsecond'
                    FROM given WHERE NOT EXISTS (SELECT 1 FROM erased) ORDER BY position
                  ON CONFLICT (dispatch_id, dedupe_key) DO NOTHING
                  RETURNING dedupe_key)
           SELECT EXISTS (SELECT 1 FROM erased) AS erased, ARRAY(SELECT dedupe_key FROM inserted) AS inserted`,
    values: [
      dispatchId,
      column((r) => r.dedupeKey),
      column((r) => r.event.event_id),
      column((r) => r.event.status),
      column((r) => r.event.occurred_at),
      column((r) => r.event.reason),
      column((r) => r.event.location),
      column((r) => r.original?.vocabulary),
      column((r) => r.original?.status),
      column((r) => r.original?.substatus),
      column((r) => r.original?.time),
    ],
  });
  if (rows[0]!.erased) return 'erased';
  // A key listed twice is inserted by its first row only (ON CONFLICT skips the second).
  const fresh = new Set(rows[0]!.inserted);
  return events.map(({ dedupeKey }) => (fresh.delete(dedupeKey) ? 'inserted' : 'duplicate'));
}

/** Records one event (`recordCarrierEvents` of one): `inserted`, `duplicate` or `erased`. */
export async function recordCarrierEvent(
  pool: Pool,
  dispatchId: string,
  dedupeKey: string,
  event: CarrierEventRecord['event'],
  original?: VocabularyStatus,
): Promise<'inserted' | 'duplicate' | 'erased'> {
  const recorded = await recordCarrierEvents(pool, dispatchId, [{ dedupeKey, event, ...(original ? { original } : {}) }]);
  return recorded === 'erased' ? 'erased' : recorded[0]!;
}

/** `recordCarrierEvent`, true when the event was recorded now. */
export async function insertCarrierEvent(...args: Parameters<typeof recordCarrierEvent>): Promise<boolean> {
  return (await recordCarrierEvent(...args)) === 'inserted';
}

/**
 * Sets the effect of an event nobody else will judge, because its workflow has closed: `after_delivery`
 * (delivered), `workflow_closed` (terminated or failed undelivered, docs/states.md "Closed dispatches").
 * True when it set it now (false: it had one already, e.g. the same event sent again).
 */
export async function setCarrierEventEffect(
  pool: Pool,
  dispatchId: string,
  dedupeKey: string,
  effect: Extract<EventEffect, 'after_delivery'> | 'workflow_closed',
): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'carrier-event-effect',
    text: 'UPDATE carrier_events SET effect = $3 WHERE dispatch_id = $1 AND dedupe_key = $2 AND effect IS NULL',
    values: [dispatchId, dedupeKey, effect],
  });
  return (rowCount ?? 0) > 0;
}

/**
 * The events a dispatch's workflow folded and that count (not refused as `rejected` or
 * `workflow_closed`), in arrival order, with their dedupe keys: the set a closed dispatch's workflow
 * starts again from (ingest/carrier-events.ts).
 */
export async function foldedCarrierEvents(
  pool: Pool,
  dispatchId: string,
): Promise<Array<{ dedupeKey: string; status: CarrierEventBody['status']; occurredAt: string; reason: ExceptionReason | null }>> {
  const { rows } = await pool.query(
    `SELECT dedupe_key, status, occurred_at, reason FROM carrier_events
      WHERE dispatch_id = $1 AND effect IS NOT NULL AND effect NOT IN ('rejected', 'workflow_closed')
      ORDER BY received_at, dedupe_key`,
    [dispatchId],
  );
  return rows.map((row) => ({ dedupeKey: row.dedupe_key, status: row.status, occurredAt: (row.occurred_at as Date).toISOString(), reason: row.reason })); // prettier-ignore
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

// ---------- GET /v1/dispatches/{id}/events: the log a page at a time ----------

/** Where a page ended: keyset position in the (received_at, dedupe_key) order. */
export interface CarrierEventCursor {
  /** received_at with its full microsecond precision. */
  receivedAt: string;
  dedupeKey: string;
}

export interface CarrierEventPageItem {
  /** Stable and opaque: derived from the dispatch and the event's dedupe key (the table's key). */
  id: string;
  status: string;
  occurredAt: string;
  receivedAt: string;
  reason: string | null;
  location: string | null;
  eventId: string | null;
  effect: EventEffect | null;
  original: VocabularyStatus | null;
}

// In arrival order through carrier_events_dispatch_received_idx. ORDER BY names the table's column:
// a bare received_at would be the select list's to_char text, which no index serves (every page
// sorted all of the dispatch's events; test/db/list-plans.test.ts).
const PAGE = `
  SELECT dedupe_key, status, reason, location, event_id, effect, vocabulary, vocabulary_status, vocabulary_substatus, original_time,
         to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at,
         ${utcMicroseconds('received_at')} AS received_at
    FROM carrier_events
   WHERE dispatch_id = $1
     AND ($2::timestamptz IS NULL OR (received_at, dedupe_key) > ($2, $3::text))
   ORDER BY carrier_events.received_at, dedupe_key
   LIMIT $4`;

/** One dispatch's carrier events in the order they arrived, `limit` at a time. */
export async function pageCarrierEvents(
  pool: Pool,
  dispatchId: string,
  page: { limit: number; after?: CarrierEventCursor },
): Promise<{ items: CarrierEventPageItem[]; next?: CarrierEventCursor }> {
  const { rows } = await pool.query(PAGE, [dispatchId, page.after?.receivedAt ?? null, page.after?.dedupeKey ?? null, page.limit + 1]);
  const items = rows.slice(0, page.limit).map((row) => ({
    dedupeKey: row.dedupe_key as string,
    id: carrierEventId(dispatchId, row.dedupe_key),
    status: row.status,
    occurredAt: row.occurred_at,
    receivedAt: row.received_at,
    reason: row.reason,
    location: row.location,
    eventId: row.event_id,
    effect: row.effect,
    original: row.vocabulary
      ? {
          vocabulary: row.vocabulary,
          status: row.vocabulary_status,
          ...(row.vocabulary_substatus === null ? {} : { substatus: row.vocabulary_substatus }),
          ...(row.original_time === null ? {} : { time: row.original_time }),
        }
      : null,
  }));
  const last = items.at(-1);
  return {
    items: items.map(({ dedupeKey: _key, ...item }) => item),
    next: rows.length > page.limit && last ? { receivedAt: last.receivedAt, dedupeKey: last.dedupeKey } : undefined,
  };
}

/** `cevt_` and 24 hex digits of SHA-256 over the dispatch id and the dedupe key. */
export function carrierEventId(dispatchId: string, dedupeKey: string): string {
  return `cevt_${createHash('sha256').update(`${dispatchId}\0${dedupeKey}`).digest('hex').slice(0, 24)}`;
}

/**
 * The list's cursors are those of the creation-order lists (./creation-cursor.ts), the same text
 * ("received_at|dedupe key") and the same refusals: a time that is no instant of the calendar (a day
 * no calendar has, 24:00, year 0000), or a key Postgres cannot hold (a NUL), decodes to undefined,
 * the route's 400 naming `cursor`, not a query Postgres refuses (a 500).
 */
const EVENT_CURSORS = creationCursors(/[^\0]+/);

/** Opaque to callers (base64url); its layout may change without notice. */
export function encodeCarrierEventCursor(cursor: CarrierEventCursor): string {
  return EVENT_CURSORS.encode({ createdAt: cursor.receivedAt, id: cursor.dedupeKey });
}

/** Undefined for anything `encodeCarrierEventCursor` did not make. */
export function decodeCarrierEventCursor(text: string): CarrierEventCursor | undefined {
  const cursor = EVENT_CURSORS.decode(text);
  return cursor && { receivedAt: cursor.createdAt, dedupeKey: cursor.id };
}
