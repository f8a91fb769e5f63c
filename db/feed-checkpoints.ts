// Tables: feed_unmatched_checkpoints, feed_ignored_checkpoints (reads dispatches, carrier_events and
// erasures). What the inbound endpoint of a tracking feed asks the database about a tracking
// (docs/tracking-feeds.md "Matching"): the dispatches of the feed's issuer and mode it may belong to,
// each with those of the checkpoints' dedupe keys its workflow has already folded (an effect is
// recorded: nothing to signal again), in ONE statement; the checkpoints no dispatch matched yet,
// kept 30 days, listed, and taken back when a matching dispatch is registered (deleted once
// applied); and the checkpoints it ignored, with why, kept 30 days and listed, never applied.
import type { IgnoreReason } from '../domain/tracking-feed-schemas.js';
import { isCalendarInstant, utcMicroseconds } from './creation-cursor.js';
import { notErased } from './dispatches.js';
import { numberHash } from './erasure-records.js';
import type { Pool } from './pool.js';

type Mode = 'live' | 'test';

/** How long a checkpoint no dispatch matched is kept (DESIGN §10). */
export const UNMATCHED_KEPT_DAYS = 30;

export interface MatchCandidate {
  id: string;
  dispatchDate: Date;
  countryCode: string;
  carrier: string | null;
  /** Named by one of the tracking's reference fields (matched before any tracking number). */
  byReference: boolean;
  /** Dedupe keys of the asked ones whose effect the workflow has recorded. */
  settled: Set<string>;
}

/**
 * The candidate dispatches of a tracking: those of the issuer and mode whose id is one of
 * `references`, or whose tracking key (its tracking number as normaliseTrackingNumber makes it,
 * stored at registration by db/dispatch-changes.ts) is `trackingNumber`; the referenced first, then
 * the most recently registered first.
 */
export async function matchCandidates(
  pool: Pool,
  query: { issuerId: string; mode: Mode; references: string[]; trackingNumber: string; dedupeKeys: string[] },
): Promise<MatchCandidate[]> {
  const { rows } = await pool.query({
    name: 'feed-match-candidates-v2',
    text: `SELECT d.id, d.dispatch_date, d.country_code, d.carrier, d.id = ANY($3::uuid[]) AS by_reference,
                  coalesce((SELECT array_agg(e.dedupe_key) FROM carrier_events e
                             WHERE e.dispatch_id = d.id AND e.dedupe_key = ANY($5::text[]) AND e.effect IS NOT NULL), '{}') AS settled
             FROM dispatches d
            WHERE d.issuer_id = $1 AND d.mode = $2 AND ${notErased('d.id')}
              AND (d.id = ANY($3::uuid[])
                   OR d.tracking_key = $4)
            ORDER BY by_reference DESC, d.created_at DESC, d.id
            LIMIT 20`,
    values: [query.issuerId, query.mode, query.references, query.trackingNumber, query.dedupeKeys],
  });
  return rows.map((row) => ({
    id: row.id,
    dispatchDate: row.dispatch_date,
    countryCode: row.country_code,
    carrier: row.carrier,
    byReference: row.by_reference,
    settled: new Set(row.settled as string[]),
  }));
}

/** A checkpoint kept until a dispatch matches it. `time` and `original` as the provider module gave them. */
export interface UnmatchedCheckpoint {
  feedId: string;
  issuerId: string;
  mode: Mode;
  trackingNumber: string;
  carrier: string | null;
  references: string[];
  eventId: string;
  status: string;
  reason: string | null;
  location: string | null;
  time: unknown;
  original: unknown;
}

/**
 * Keeps the checkpoints (a repeat of one already kept is a no-op), in one statement, in key order: two
 * requests keeping the same checkpoints at once (a provider's webhook sent twice, its history in
 * another order) then wait for each other row by row instead of deadlocking (one would answer 500).
 */
export async function keepUnmatched(pool: Pool, checkpoints: readonly UnmatchedCheckpoint[]): Promise<void> {
  if (checkpoints.length === 0) return;
  await pool.query({
    name: 'feed-unmatched-keep-v2',
    text: `INSERT INTO feed_unmatched_checkpoints
             (feed_id, issuer_id, mode, tracking_number, carrier, references_, event_id, status, reason, location, time, original)
           SELECT c.feed_id, c.issuer_id, c.mode, c.tracking_number, c.carrier,
                  ARRAY(SELECT jsonb_array_elements_text(c.refs)), c.event_id, c.status, c.reason, c.location, c.time, c.original
             FROM jsonb_to_recordset($1::jsonb) AS c(feed_id text, issuer_id text, mode text, tracking_number text, carrier text,
                  refs jsonb, event_id text, status text, reason text, location text, time jsonb, original jsonb)
            ORDER BY c.feed_id, c.tracking_number, c.event_id
           ON CONFLICT (feed_id, tracking_number, event_id) DO NOTHING`,
    values: [
      JSON.stringify(
        checkpoints.map((c) => ({
          feed_id: c.feedId,
          issuer_id: c.issuerId,
          mode: c.mode,
          tracking_number: c.trackingNumber,
          carrier: c.carrier,
          refs: c.references,
          event_id: c.eventId,
          status: c.status,
          reason: c.reason,
          location: c.location,
          time: c.time,
          original: c.original,
        })),
      ),
    ],
  });
}

export interface KeptCheckpoint extends UnmatchedCheckpoint {
  receivedAt: Date;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a row of the table, typed by the mapping below
const toKept = (row: Record<string, any>): KeptCheckpoint => ({
  feedId: row.feed_id,
  issuerId: row.issuer_id,
  mode: row.mode,
  trackingNumber: row.tracking_number,
  carrier: row.carrier,
  references: row.references_,
  eventId: row.event_id,
  status: row.status,
  reason: row.reason,
  location: row.location,
  time: row.time,
  original: row.original,
  receivedAt: row.received_at,
});

export interface UnmatchedCursor {
  receivedAt: string;
  trackingNumber: string;
  eventId: string;
}

/**
 * One page of a feed's rows of the last 30 days in one of its two lists (kept unmatched, ignored),
 * newest first, by (received_at, tracking_number, event_id).
 */
async function pageFeedRows(
  pool: Pool,
  table: 'feed_unmatched_checkpoints' | 'feed_ignored_checkpoints',
  feedId: string,
  page: { limit: number; after?: UnmatchedCursor },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the table's rows, typed by each list's mapping
): Promise<{ rows: Record<string, any>[]; next?: UnmatchedCursor }> {
  const { rows } = await pool.query(
    `SELECT *, ${utcMicroseconds('received_at')} AS cursor_at
       FROM ${table}
      WHERE feed_id = $1 AND received_at > now() - make_interval(days => $2)
        AND ($3::timestamptz IS NULL OR (received_at, tracking_number, event_id) < ($3, $4, $5))
      ORDER BY received_at DESC, tracking_number DESC, event_id DESC
      LIMIT $6`,
    [feedId, UNMATCHED_KEPT_DAYS, page.after?.receivedAt ?? null, page.after?.trackingNumber ?? null, page.after?.eventId ?? null, page.limit + 1], // prettier-ignore
  );
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  return {
    rows: items,
    next: rows.length > page.limit && last ? { receivedAt: last.cursor_at, trackingNumber: last.tracking_number, eventId: last.event_id } : undefined, // prettier-ignore
  };
}

/** One feed's kept checkpoints of the last 30 days, newest first, a page at a time. */
export async function pageUnmatched(
  pool: Pool,
  feedId: string,
  page: { limit: number; after?: UnmatchedCursor },
): Promise<{ items: KeptCheckpoint[]; next?: UnmatchedCursor }> {
  const { rows, next } = await pageFeedRows(pool, 'feed_unmatched_checkpoints', feedId, page);
  return { items: rows.map(toKept), next };
}

/**
 * The kept checkpoints a dispatch just registered may take: of its issuer and mode, naming its id in
 * a reference field or carrying its tracking number (normalised; a dispatch without one takes none
 * by number, not even those whose number was blank), received within 30 days.
 */
export async function unmatchedFor(
  pool: Pool,
  dispatch: { id: string; issuerId: string; mode: Mode; trackingNumber: string | null },
): Promise<KeptCheckpoint[]> {
  const { rows } = await pool.query(
    `SELECT * FROM feed_unmatched_checkpoints
      WHERE issuer_id = $1 AND mode = $2 AND received_at > now() - make_interval(days => $5)
        AND (references_ @> ARRAY[$3::text] OR ($4 <> '' AND tracking_number = $4))
      ORDER BY received_at, event_id`,
    [dispatch.issuerId, dispatch.mode, dispatch.id, dispatch.trackingNumber ?? '', UNMATCHED_KEPT_DAYS],
  );
  return rows.map(toKept);
}

/** Deletes kept checkpoints once applied to a dispatch (their carrier events now hold them). */
export async function dropUnmatched(
  pool: Pool,
  kept: ReadonlyArray<Pick<UnmatchedCheckpoint, 'feedId' | 'trackingNumber' | 'eventId'>>,
): Promise<void> {
  if (kept.length === 0) return;
  await pool.query(
    `DELETE FROM feed_unmatched_checkpoints f
      USING jsonb_to_recordset($1::jsonb) AS k(feed_id text, tracking_number text, event_id text)
      WHERE f.feed_id = k.feed_id AND f.tracking_number = k.tracking_number AND f.event_id = k.event_id`,
    [JSON.stringify(kept.map((k) => ({ feed_id: k.feedId, tracking_number: k.trackingNumber, event_id: k.eventId })))],
  );
}

/**
 * Deletes up to `limit` kept checkpoints of any feed older than 30 days: the retention sweep's batch
 * (activities/retention.ts), so that no feed's expired rows outlive their 30 days whether or not its
 * list is read.
 */
export async function deleteExpiredUnmatched(db: Pick<Pool, 'query'>, options: { limit: number }): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM feed_unmatched_checkpoints WHERE (feed_id, tracking_number, event_id) IN (
       SELECT feed_id, tracking_number, event_id FROM feed_unmatched_checkpoints
        WHERE received_at <= now() - make_interval(days => $1) LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [UNMATCHED_KEPT_DAYS, options.limit],
  );
  return rowCount ?? 0;
}

/** Deletes kept checkpoints older than 30 days (called with the list, so expired rows do not pile up). */
export async function dropExpiredUnmatched(pool: Pool, feedId: string): Promise<void> {
  await pool.query('DELETE FROM feed_unmatched_checkpoints WHERE feed_id = $1 AND received_at <= now() - make_interval(days => $2)', [feedId, UNMATCHED_KEPT_DAYS]); // prettier-ignore
}

export function encodeUnmatchedCursor(cursor: UnmatchedCursor): string {
  return Buffer.from(JSON.stringify([cursor.receivedAt, cursor.trackingNumber, cursor.eventId]), 'utf8').toString('base64url');
}

/**
 * Undefined for anything `encodeUnmatchedCursor` did not make, and for a position Postgres would
 * refuse (a 500, not the route's 400 naming `cursor`): a time that is no instant of the calendar (a
 * day no calendar has, 24:00, year 0000; ./creation-cursor.ts), or a NUL in a text.
 */
export function decodeUnmatchedCursor(text: string): UnmatchedCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === 'string' && !v.includes('\u0000')))
      return undefined;
    if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$/.test(value[0]) || !isCalendarInstant(value[0]))
      return undefined;
    return { receivedAt: value[0], trackingNumber: value[1], eventId: value[2] };
  } catch {
    return undefined;
  }
}

/** An ignored checkpoint as kept: the provider's own status, sub-status and time string, and why. */
export interface IgnoredCheckpoint {
  feedId: string;
  issuerId: string;
  mode: Mode;
  trackingNumber: string;
  carrier: string | null;
  references: string[];
  /** The dispatch it matched (out_of_bounds, dispatch_closed); null when ignored before matching (and for `malformed`). */
  dispatchId: string | null;
  eventId: string;
  status: string;
  substatus: string | null;
  originalTime: string | null;
  reason: IgnoreReason;
  message: string;
}

/**
 * Keeps the ignored checkpoints of one inbound request (or one registration's kept checkpoints), in
 * one statement in key order (a repeat of one already kept is a no-op; see keepUnmatched), and answers how many rows each feed got,
 * with the feed's provider (read from the feed's row by that same statement, for the metric
 * `cds_feed_checkpoints_total`; repeats and erased dispatches' not counted): none of an erased dispatch (docs/privacy.md "Erasure"), whether named by the
 * dispatch it matched or by a reference; the matched dispatch's row is share-locked, so an erasure
 * running meanwhile either waits for this row and removes it, or has removed the dispatch first
 * and this row is not written.
 */
export async function keepIgnored(
  pool: Pool,
  checkpoints: readonly IgnoredCheckpoint[],
): Promise<Map<string, { provider: string; count: number }>> {
  const added = new Map<string, { provider: string; count: number }>();
  if (checkpoints.length === 0) return added;
  const { rows } = await pool.query({
    name: 'feed-ignored-keep-v5',
    text: `INSERT INTO feed_ignored_checkpoints
             (feed_id, issuer_id, mode, tracking_number, carrier, references_, dispatch_id, event_id, status, substatus, original_time, reason, message)
           SELECT c.feed_id, c.issuer_id, c.mode, c.tracking_number, c.carrier, ARRAY(SELECT jsonb_array_elements_text(c.refs)),
                  c.dispatch_id, c.event_id, c.status, c.substatus, c.original_time, c.reason, c.message
             FROM jsonb_to_recordset($1::jsonb) AS c(feed_id text, issuer_id text, mode text, tracking_number text, carrier text,
                  refs jsonb, dispatch_id uuid, event_id text, status text, substatus text, original_time text, reason text, message text)
            WHERE NOT EXISTS (SELECT 1 FROM erasures e
                               WHERE e.dispatch_id = c.dispatch_id
                                  OR (e.dispatch_id = ANY (ARRAY(SELECT jsonb_array_elements_text(c.refs))::uuid[])
                                      AND e.issuer_id = c.issuer_id AND e.mode = c.mode))
              AND (c.dispatch_id IS NULL OR EXISTS (SELECT 1 FROM dispatches d WHERE d.id = c.dispatch_id FOR KEY SHARE))
              -- Matched to no dispatch (ignored before matching): nor an erased one's tracking number.
              AND (c.dispatch_id IS NOT NULL OR NOT EXISTS (
                    SELECT 1 FROM erased_tracking_numbers n
                     WHERE n.issuer_id = c.issuer_id AND n.mode = c.mode AND n.number_hash = ${numberHash('c.tracking_number')}
                       AND n.expires_at > now()))
            ORDER BY c.feed_id, c.tracking_number, c.event_id
           ON CONFLICT (feed_id, tracking_number, event_id) DO NOTHING
           RETURNING feed_id, (SELECT f.provider FROM tracking_feeds f WHERE f.id = feed_id) AS provider`,
    values: [
      JSON.stringify(
        checkpoints.map((c) => ({
          feed_id: c.feedId,
          issuer_id: c.issuerId,
          mode: c.mode,
          tracking_number: c.trackingNumber,
          carrier: c.carrier,
          refs: c.references,
          dispatch_id: c.dispatchId,
          event_id: c.eventId,
          status: c.status,
          substatus: c.substatus,
          original_time: c.originalTime,
          reason: c.reason,
          message: c.message,
        })),
      ),
    ],
  });
  for (const row of rows) added.set(row.feed_id, { provider: row.provider, count: (added.get(row.feed_id)?.count ?? 0) + 1 });
  return added;
}

/**
 * Takes off the ignored list the checkpoints that have since become carrier events (one ignored for
 * having no time, sent again with one under the same provider id; one outside the bounds then, inside
 * them now): the list shows what the cards do not have. One statement.
 */
export async function dropIgnored(
  pool: Pool,
  applied: ReadonlyArray<Pick<IgnoredCheckpoint, 'feedId' | 'trackingNumber' | 'eventId'>>,
): Promise<void> {
  if (applied.length === 0) return;
  await pool.query({
    name: 'feed-ignored-drop-v1',
    text: `DELETE FROM feed_ignored_checkpoints f
            USING jsonb_to_recordset($1::jsonb) AS k(feed_id text, tracking_number text, event_id text)
            WHERE f.feed_id = k.feed_id AND f.tracking_number = k.tracking_number AND f.event_id = k.event_id`,
    values: [JSON.stringify(applied.map((a) => ({ feed_id: a.feedId, tracking_number: a.trackingNumber, event_id: a.eventId })))],
  });
}

export interface KeptIgnored extends IgnoredCheckpoint {
  receivedAt: Date;
}

/** One feed's ignored checkpoints of the last 30 days, newest first, a page at a time (the unmatched list's cursor). */
export async function pageIgnored(
  pool: Pool,
  feedId: string,
  page: { limit: number; after?: UnmatchedCursor },
): Promise<{ items: KeptIgnored[]; next?: UnmatchedCursor }> {
  const { rows, next } = await pageFeedRows(pool, 'feed_ignored_checkpoints', feedId, page);
  return {
    items: rows.map((row) => ({
      feedId: row.feed_id,
      issuerId: row.issuer_id,
      mode: row.mode,
      trackingNumber: row.tracking_number,
      carrier: row.carrier,
      references: row.references_,
      dispatchId: row.dispatch_id,
      eventId: row.event_id,
      status: row.status,
      substatus: row.substatus,
      originalTime: row.original_time,
      reason: row.reason,
      message: row.message,
      receivedAt: row.received_at,
    })),
    next,
  };
}

/** Deletes up to `limit` ignored checkpoints of any feed older than 30 days: the retention sweep's batch. */
export async function deleteExpiredIgnored(db: Pick<Pool, 'query'>, options: { limit: number }): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM feed_ignored_checkpoints WHERE (feed_id, tracking_number, event_id) IN (
       SELECT feed_id, tracking_number, event_id FROM feed_ignored_checkpoints
        WHERE received_at <= now() - make_interval(days => $1) LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [UNMATCHED_KEPT_DAYS, options.limit],
  );
  return rowCount ?? 0;
}
