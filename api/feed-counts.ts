// The tracking feeds' counts (docs/tracking-feeds.md "Feeds": the last 24 hours'), as the inbound
// endpoint adds them: summed in this process per feed and written at most once a FLUSH_MS per feed
// (db/tracking-feeds.ts addFeedCounts), so that a provider resending a body of seen checkpoints
// costs the matching statement and nearly nothing more (bench/tracking-feeds). Counts are
// observability, not data: a process killed before its next write loses at most FLUSH_MS of them;
// a stopped one writes what it holds (`close`).
import { addFeedCounts, zeroCounts, type FeedCounts } from '../db/tracking-feeds.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../platform/logger.js';

export const FLUSH_MS = 1000;

export class FeedCounter {
  private readonly pending = new Map<string, FeedCounts>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {}

  add(feedId: string, counts: Partial<FeedCounts>): void {
    const held = this.pending.get(feedId) ?? zeroCounts();
    for (const [name, value] of Object.entries(counts) as Array<[keyof FeedCounts, number]>) held[name] += value;
    this.pending.set(feedId, held);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Writes what is held, one statement per feed. */
  async flush(): Promise<void> {
    this.timer = undefined;
    const held = [...this.pending];
    this.pending.clear();
    for (const [feedId, counts] of held) {
      try {
        await addFeedCounts(this.pool, feedId, counts);
      } catch (error) {
        // Kept for the next write rather than lost: the database may be back by then.
        this.logger.warn({ err: error, feed_id: feedId }, 'tracking feed counts not written; kept for the next write');
        this.add(feedId, counts);
      }
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.flush();
    clearTimeout(this.timer);
  }
}
