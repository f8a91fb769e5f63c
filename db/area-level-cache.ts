// Tables: none of its own (a per-run cache over db/transit-statistics.ts).
import type { Pool } from './pool.js';
import { emptyLevel, levelKey, loadAreaLevels, type AreaStatisticsSource, type LevelRows } from './transit-statistics.js';

/**
 * The code and prefix levels of one bulk refresh attempt (activities/prediction-refresh.ts): each
 * level is read the first time a page needs it and held for the rest of the attempt, so a level
 * shared by many pages (a prefix, a busy postal code) is read once rather than once per page, as
 * the country level already is (db/country-statistics-cache.ts). The operator delays are read on
 * every call, so a condition set during the run applies from the next page on. A delivery recorded
 * during the run reaches a level already held at the next run; the projection write a signal
 * causes reads every level afresh anyway. Created per attempt, never shared across runs.
 */
export class AreaLevelCache {
  private readonly held = new Map<string, LevelRows>();
  private day: string | undefined;

  constructor(private readonly pool: Pool) {}

  /** Levels held (or known empty) so far. */
  get size(): number {
    return this.held.size;
  }

  readonly source: AreaStatisticsSource = async (request, today) => {
    if (today !== this.day) {
      this.held.clear();
      this.day = today;
    }
    const codes = this.unheld(request.codes, (c) => levelKey('code', c.country, c.code));
    const prefixes = this.unheld(request.prefixes, (p) => levelKey('prefix', p.country, p.prefix));
    const read = await loadAreaLevels(this.pool, { codes, prefixes, countries: request.countries }, today);
    // A level without history is held as empty, so it is not asked for again either.
    for (const c of codes) this.hold(levelKey('code', c.country, c.code), read.levels);
    for (const p of prefixes) this.hold(levelKey('prefix', p.country, p.prefix), read.levels);
    return { levels: this.held, delays: read.delays };
  };

  /** The items whose level is not held yet, each key once. */
  private unheld<T>(items: readonly T[], key: (item: T) => string): T[] {
    const wanted = new Map<string, T>();
    for (const item of items) if (!this.held.has(key(item)) && !wanted.has(key(item))) wanted.set(key(item), item);
    return [...wanted.values()];
  }

  private hold(key: string, read: Map<string, LevelRows>): void {
    this.held.set(key, read.get(key) ?? emptyLevel());
  }
}
