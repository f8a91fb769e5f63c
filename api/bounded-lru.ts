// A Map kept in least-recently-used order and never above its size: the in-process caches of the
// API (api/key-cache.ts, api/request-admission.ts) evict their oldest entry instead of growing or
// being cleared whole, so a flood of new entries never empties them of the ones in use.
/** A Map in least-recently-used order, never above `max` entries (the oldest is evicted). */
export class BoundedLru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  /** Reads without making the entry recent. */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }
}
