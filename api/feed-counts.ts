// The tracking feeds' counts (docs/tracking-feeds.md "Feeds": the last 24 hours'), as the inbound
// endpoint adds them: summed in this process per feed and written at most once a FLUSH_MS per feed
// (db/tracking-feeds.ts addFeedCounts), so that a provider resending a body of seen checkpoints
// costs the matching statement and nearly nothing more (bench/tracking-feeds). Counts are
// observability, not data: a process killed before its next write loses at most FLUSH_MS of them;
// a stopped one writes what it holds (`close`); those of a feed deleted meanwhile are dropped.
import { addFeedCounts, zeroCounts, type FeedCounts } from '../db/tracking-feeds.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../platform/logger.js';

export const FLUSH_MS = 1000;

/** Postgres's foreign_key_violation: tracking_feed_counts.feed_id names no tracking_feeds row. */
const FOREIGN_KEY_VIOLATION = '23503';

export class FeedCounter {
  /**
   * Per feed, the counts held and whether a request among them was authenticated: kept apart from
   * the counts, so that a 401 held beside it cannot keep `last_received_at` from being stamped.
   */
  private readonly pending = new Map<string, { counts: FeedCounts; authenticated: boolean }>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {}

  /** `authenticated`: the request's signature (or token) was right, whatever became of its body. */
  add(feedId: string, counts: Partial<FeedCounts>, authenticated: boolean): void {
    const held = this.pending.get(feedId) ?? { counts: zeroCounts(), authenticated: false };
    for (const [name, value] of Object.entries(counts) as Array<[keyof FeedCounts, number]>) held.counts[name] += value;
    held.authenticated ||= authenticated;
    this.pending.set(feedId, held);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Writes what is held, one statement per feed. */
  async flush(): Promise<void> {
    this.timer = undefined;
    const held = [...this.pending];
    this.pending.clear();
    for (const [feedId, { counts, authenticated }] of held) {
      try {
        await addFeedCounts(this.pool, feedId, counts, authenticated);
      } catch (error) {
        // The feed is gone (`issuer erase` deletes its issuer's feeds; a feed's counts go with it):
        // its counts could never be written, and kept they would fail every write from now on.
        if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) {
          this.logger.info({ feed_id: feedId }, 'tracking feed counts dropped: the feed no longer exists');
          continue;
        }
        // Kept for the next write rather than lost: the database may be back by then.
        this.logger.warn({ err: error, feed_id: feedId }, 'tracking feed counts not written; kept for the next write');
        this.add(feedId, counts, authenticated);
      }
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.flush();
    clearTimeout(this.timer);
  }
}
