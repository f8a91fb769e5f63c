// The inbound endpoint's view of tracking feeds (api/routes/inbound.ts): a live feed's owner,
// provider and secret, held for API_KEY_CACHE_TTL_MS as API keys are (api/key-cache.ts), so that a
// provider resending a body of seen checkpoints costs no feed lookup. This process forgets a feed at
// once when its routes change or revoke it (api/routes/tracking-feeds.ts); another API process within
// the TTL, as for a revoked API key. Unknown ids are held too: a flood of them reads nothing twice.
import { LRUCache } from 'lru-cache';
import { findInboundFeed, type InboundFeed } from '../db/tracking-feeds.js';
import type { Pool } from '../db/pool.js';

const HELD = 10_000;

export class FeedCache {
  private readonly held: LRUCache<string, { feed: InboundFeed | null }>;

  constructor(
    private readonly pool: Pool,
    ttlMs: number,
  ) {
    this.held = new LRUCache({ max: HELD, ttl: Math.max(ttlMs, 1) });
  }

  async find(id: string): Promise<InboundFeed | undefined> {
    const held = this.held.get(id);
    if (held) return held.feed ?? undefined;
    const feed = await findInboundFeed(this.pool, id);
    this.held.set(id, { feed: feed ?? null });
    return feed;
  }

  forget(id: string): void {
    this.held.delete(id);
  }
}
