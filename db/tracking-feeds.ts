// Tables: tracking_feeds, tracking_feed_counts. Tracking feeds as the API and the dashboard manage
// them (docs/tracking-feeds.md "Feeds"): create, page, find, update the secret or description,
// revoke; the inbound endpoint's lookup of a live feed and its one counts write per request; the
// last 24 hours' counts. The secret (or Shippo token) is read only by the inbound lookup: every
// other read leaves it out, so no answer or page can show it.
import { CURSOR_AT, creationCursors, creationPage, type CreationCursor } from './creation-cursor.js';
import { idPattern, newId } from './ids.js';
import type { Pool } from './pool.js';

type Mode = 'live' | 'test';

export interface TrackingFeed {
  id: string;
  issuerId: string;
  mode: Mode;
  provider: string;
  description: string | null;
  createdAt: Date;
  lastReceivedAt: Date | null;
}

/** What the inbound endpoint needs of a feed: its owner, provider and secret. */
export interface InboundFeed {
  id: string;
  issuerId: string;
  mode: Mode;
  provider: string;
  secret: string;
}

export const FEED_COUNT_NAMES = ['received', 'applied', 'duplicate', 'unmatched', 'ignored', 'unauthorized'] as const;
export type FeedCounts = Record<(typeof FEED_COUNT_NAMES)[number], number>;
export const zeroCounts = (): FeedCounts => ({ received: 0, applied: 0, duplicate: 0, unmatched: 0, ignored: 0, unauthorized: 0 });

const COLUMNS = `id, issuer_id, mode, provider, description, created_at, last_received_at,
  ${CURSOR_AT} AS cursor_at`;

interface FeedRow {
  id: string;
  issuer_id: string;
  mode: Mode;
  provider: string;
  description: string | null;
  created_at: Date;
  last_received_at: Date | null;
  cursor_at: string;
}

const toFeed = (row: FeedRow): TrackingFeed => ({
  id: row.id,
  issuerId: row.issuer_id,
  mode: row.mode,
  provider: row.provider,
  description: row.description,
  createdAt: row.created_at,
  lastReceivedAt: row.last_received_at,
});

export async function createFeed(
  pool: Pool,
  input: { issuerId: string; mode: Mode; provider: string; secret: string; description: string | null },
): Promise<TrackingFeed> {
  const { rows } = await pool.query<FeedRow>(
    `INSERT INTO tracking_feeds (id, issuer_id, mode, provider, secret, description)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [newId('fd'), input.issuerId, input.mode, input.provider, input.secret, input.description],
  );
  return toFeed(rows[0]);
}

/** The issuer's feed of this mode, not revoked; undefined otherwise (the API's 404). */
export async function findFeed(pool: Pool, issuerId: string, mode: Mode, id: string): Promise<TrackingFeed | undefined> {
  const { rows } = await pool.query<FeedRow>(
    `SELECT ${COLUMNS} FROM tracking_feeds WHERE id = $1 AND issuer_id = $2 AND mode = $3 AND revoked_at IS NULL`,
    [id, issuerId, mode],
  );
  return rows[0] && toFeed(rows[0]);
}

/** The issuer's live feed of either mode (the dashboard shows both); undefined otherwise. */
export async function findIssuerFeed(pool: Pool, issuerId: string, id: string): Promise<TrackingFeed | undefined> {
  const { rows } = await pool.query<FeedRow>(`SELECT ${COLUMNS} FROM tracking_feeds WHERE id = $1 AND issuer_id = $2 AND revoked_at IS NULL`, [id, issuerId]); // prettier-ignore
  return rows[0] && toFeed(rows[0]);
}

/** A live (not revoked) feed with its secret, for the inbound endpoint; undefined → 404. */
export async function findInboundFeed(pool: Pool, id: string): Promise<InboundFeed | undefined> {
  const { rows } = await pool.query({
    name: 'tracking-feed-inbound',
    text: 'SELECT id, issuer_id, mode, provider, secret FROM tracking_feeds WHERE id = $1 AND revoked_at IS NULL',
    values: [id],
  });
  const row = rows[0];
  return row && { id: row.id, issuerId: row.issuer_id, mode: row.mode, provider: row.provider, secret: row.secret };
}

export async function pageFeeds(
  pool: Pool,
  issuerId: string,
  mode: Mode,
  page: { limit: number; after?: CreationCursor },
): Promise<{ items: TrackingFeed[]; next?: CreationCursor }> {
  const { rows } = await pool.query<FeedRow>(
    `SELECT ${COLUMNS} FROM tracking_feeds
      WHERE issuer_id = $1 AND mode = $2 AND revoked_at IS NULL
        AND ($3::timestamptz IS NULL OR (created_at, id) > ($3, $4))
      ORDER BY created_at, id
      LIMIT $5`,
    [issuerId, mode, page.after?.createdAt ?? null, page.after?.id ?? null, page.limit + 1],
  );
  return creationPage(rows, page.limit, toFeed);
}

/** Sets the secret and/or the description (null clears it); undefined when not the issuer's live feed. */
export async function updateFeed(
  pool: Pool,
  issuerId: string,
  mode: Mode,
  id: string,
  changes: { secret?: string; description?: string | null },
): Promise<TrackingFeed | undefined> {
  const { rows } = await pool.query<FeedRow>(
    `UPDATE tracking_feeds
        SET secret = coalesce($4, secret),
            description = CASE WHEN $5 THEN $6 ELSE description END
      WHERE id = $1 AND issuer_id = $2 AND mode = $3 AND revoked_at IS NULL
      RETURNING ${COLUMNS}`,
    [id, issuerId, mode, changes.secret ?? null, changes.description !== undefined, changes.description ?? null],
  );
  return rows[0] && toFeed(rows[0]);
}

/** Revokes the feed: its URL answers 404 from then on. False when not the issuer's live feed. */
export async function revokeFeed(pool: Pool, issuerId: string, mode: Mode, id: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    'UPDATE tracking_feeds SET revoked_at = now() WHERE id = $1 AND issuer_id = $2 AND mode = $3 AND revoked_at IS NULL',
    [id, issuerId, mode],
  );
  return rowCount === 1;
}

/**
 * Adds inbound requests' counts to the feed's current hour, and stamps `last_received_at` when one
 * of them was authenticated: one statement per write.
 */
export async function addFeedCounts(pool: Pool, feedId: string, counts: FeedCounts, authenticated: boolean): Promise<void> {
  await pool.query({
    name: 'tracking-feed-counts-v2',
    text: `WITH stamped AS (
             UPDATE tracking_feeds SET last_received_at = now() WHERE id = $1 AND $8::boolean
           )
           INSERT INTO tracking_feed_counts AS c (feed_id, hour, received, applied, duplicate, unmatched, ignored, unauthorized)
           VALUES ($1, date_trunc('hour', now()), $2, $3, $4, $5, $6, $7)
           ON CONFLICT (feed_id, hour) DO UPDATE SET
             received = c.received + excluded.received, applied = c.applied + excluded.applied,
             duplicate = c.duplicate + excluded.duplicate, unmatched = c.unmatched + excluded.unmatched,
             ignored = c.ignored + excluded.ignored, unauthorized = c.unauthorized + excluded.unauthorized`,
    values: [feedId, counts.received, counts.applied, counts.duplicate, counts.unmatched, counts.ignored, counts.unauthorized, authenticated], // prettier-ignore
  });
}

/** The last 24 hours' counts of each feed (hours started within them), zero for a feed with none. */
export async function recentFeedCounts(pool: Pool, feedIds: readonly string[]): Promise<Map<string, FeedCounts>> {
  const { rows } = await pool.query(
    `SELECT feed_id, sum(received)::int AS received, sum(applied)::int AS applied, sum(duplicate)::int AS duplicate,
            sum(unmatched)::int AS unmatched, sum(ignored)::int AS ignored, sum(unauthorized)::int AS unauthorized
       FROM tracking_feed_counts
      WHERE feed_id = ANY($1) AND hour > now() - interval '24 hours'
      GROUP BY feed_id`,
    [feedIds],
  );
  const counts = new Map(feedIds.map((id) => [id, zeroCounts()]));
  for (const row of rows) {
    counts.set(row.feed_id, Object.fromEntries(FEED_COUNT_NAMES.map((name) => [name, row[name] as number])) as FeedCounts);
  }
  return counts;
}

/** A feed's hourly counts are read for the last 24 hours; the retention sweep deletes those older than this. */
export const FEED_COUNTS_KEPT_HOURS = 48;

/** Deletes at most `limit` hourly counts older than FEED_COUNTS_KEPT_HOURS, oldest first: how many. */
export async function deleteOldFeedCounts(db: Pick<Pool, 'query'>, options: { limit: number }): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM tracking_feed_counts WHERE (feed_id, hour) IN (
       SELECT feed_id, hour FROM tracking_feed_counts
        WHERE hour < now() - make_interval(hours => $1) ORDER BY hour LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [FEED_COUNTS_KEPT_HOURS, options.limit],
  );
  return rowCount ?? 0;
}

const cursors = creationCursors(idPattern('fd'));
export const encodeFeedCursor = cursors.encode;
export const decodeFeedCursor = cursors.decode;
