// At-least-once delivery means duplicates (docs/webhooks.md "Delivery and retry schedule"): an event is the same event when
// (data.id, event, timestamp) are. `dedupeKey` is the key to store (a unique column in the
// consumer's database); `createDeduper` is an in-memory, bounded version for a single process.
import type { WebhookEnvelope } from '../../domain/webhook-payload.js';

type Identity = Pick<WebhookEnvelope, 'event' | 'timestamp'> & { data: { id: string } };

export function dedupeKey(envelope: Identity): string {
  return `${envelope.data.id}|${envelope.event}|${new Date(envelope.timestamp).toISOString()}`;
}

export interface Deduper {
  /** True the first time an event is seen (process it), false for a duplicate (acknowledge, skip). */
  firstSeen(envelope: Identity): boolean;
  readonly size: number;
}

/** Remembers the last `maxEntries` keys (oldest forgotten first). */
export function createDeduper(options: { maxEntries?: number } = {}): Deduper {
  const max = options.maxEntries ?? 100_000;
  const seen = new Set<string>();
  return {
    firstSeen(envelope) {
      const key = dedupeKey(envelope);
      if (seen.has(key)) return false;
      seen.add(key);
      if (seen.size > max) seen.delete(seen.values().next().value!);
      return true;
    },
    get size() {
      return seen.size;
    },
  };
}
