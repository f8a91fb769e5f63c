// Tables: none of its own (a per-process cache over db/transit-statistics.ts).
// A per-process cache of the expensive part of a prediction's inputs: each country's level and
// area moments (db/transit-statistics.ts loadCountryStatistics), which read every delivery to the
// country in the look-back period (about 0.3 s for 150,000 of them, bench/transit-statistics) and
// move by a hair with each new delivery. Every projection write and the bulk prediction refresh
// read through it; the postal code and prefix levels and the operator delays are held by
// db/area-statistics-cache.ts (the worker's, emptied by NOTIFY) and db/area-level-cache.ts (a
// refresh run's).
//
// An entry serves a caller when it was loaded for the same `today`, less than the TTL ago, and at
// or after the caller's `freshAsOf`. The refresh passes the time its attempt began, so each country
// is read once per run; it signals a dispatch with the time the entry it used was loaded, and the
// projection that follows passes that time on, so it never computes from older country statistics
// than the refresh did (otherwise it could write the old window, and every hourly run would signal
// the dispatch again).
//
// An entry past its TTL but younger than MAX_STALENESS_TTLS of them still serves a caller whose
// `freshAsOf` it meets, while it is read again in the background (stale-while-revalidate): a
// registration does not wait for the country statement because five minutes have passed. Older
// than that, or older than `freshAsOf`, the caller waits for a fresh read.
import { loadCountryStatistics, type CountryStatistics, type CountryStatisticsSource } from './transit-statistics.js';
import type { Pool } from './pool.js';

/**
 * How long a registration or carrier event predicts from country statistics read earlier without
 * reading them again; up to MAX_STALENESS_TTLS of it while they are read again in the background. A
 * `history import` reaches new registrations' country level within that (code and prefix levels at
 * once, and the next hourly refresh re-predicts every open dispatch from a fresh read).
 */
export const COUNTRY_STATISTICS_TTL_MS = 5 * 60_000;

/** An expired entry is served, and read again in the background, up to this many TTLs old. */
export const MAX_STALENESS_TTLS = 2;

interface Entry {
  /** Epoch ms at which the load began: everything committed before it is in the statistics. */
  loadedAt: number;
  value: Promise<CountryStatistics>;
}

/** A country's statistics for one day: the latest entry read, and a read in flight if any. */
interface Slot {
  loaded?: Entry;
  loading?: Entry;
}

export interface CountryStatisticsCacheOptions {
  ttlMs?: number;
  now?: () => Date;
}

export class CountryStatisticsCache {
  private readonly slots = new Map<string, Slot>();
  private readonly ttlMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly pool: Pool,
    options: CountryStatisticsCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? COUNTRY_STATISTICS_TTL_MS;
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Each country's statistics for `today` with the time (ISO) its load began: from an entry loaded
   * less than the TTL ago and not before `freshAsOf` (ISO); from an older one (up to
   * MAX_STALENESS_TTLS) while it is read again in the background; else read now, all such countries
   * in one statement. Concurrent callers share a read in flight.
   */
  async get(
    countries: readonly string[],
    today: string,
    freshAsOf?: string,
  ): Promise<Map<string, { statistics: CountryStatistics; loadedAt: string }>> {
    const now = this.now().getTime();
    const notBefore = freshAsOf === undefined ? -Infinity : Date.parse(freshAsOf);
    const maxAge = MAX_STALENESS_TTLS * this.ttlMs;
    for (const [key, slot] of this.slots) {
      if (slot.loaded && now - slot.loaded.loadedAt >= maxAge) slot.loaded = undefined;
      if (!slot.loaded && !slot.loading) this.slots.delete(key);
    }
    const wanted = [...new Set(countries)];
    const serving = new Map<string, Entry>();
    const toRead: string[] = [];
    for (const country of wanted) {
      const slot = this.slotOf(country, today);
      const { loaded, loading } = slot;
      if (loaded && loaded.loadedAt >= notBefore) {
        serving.set(country, loaded);
        if (now - loaded.loadedAt >= this.ttlMs && !loading) toRead.push(country);
      } else if (loading && loading.loadedAt >= notBefore) {
        serving.set(country, loading);
      } else {
        toRead.push(country);
      }
    }
    if (toRead.length > 0) {
      const entries = this.read(toRead, today, now);
      for (const country of toRead) if (!serving.has(country)) serving.set(country, entries.get(country)!);
    }
    return new Map(
      await Promise.all(
        wanted.map(async (country) => {
          const entry = serving.get(country)!;
          return [country, { statistics: await entry.value, loadedAt: new Date(entry.loadedAt).toISOString() }] as const;
        }),
      ),
    );
  }

  /** Resolves once no read is in flight, background ones included (for tests and a clean stop). */
  async settled(): Promise<void> {
    const loading = [...this.slots.values()].flatMap((slot) => (slot.loading ? [slot.loading.value] : []));
    await Promise.allSettled(loading);
  }

  private slotOf(country: string, today: string): Slot {
    const key = `${country} ${today}`;
    let slot = this.slots.get(key);
    if (!slot) this.slots.set(key, (slot = {}));
    return slot;
  }

  /**
   * Reads the countries in one statement, each as its slot's read in flight. A finished read
   * becomes the slot's entry unless a later one already has; a failed one is forgotten (only its
   * own), so the next caller tries again, while an older entry keeps serving within its bound.
   */
  private read(countries: readonly string[], today: string, now: number): Map<string, Entry> {
    const load = loadCountryStatistics(this.pool, countries, today).then((loaded) => {
      for (const statistics of loaded.values()) deepFreeze(statistics);
      return loaded;
    });
    const entries = new Map<string, Entry>();
    for (const country of countries) {
      const slot = this.slotOf(country, today);
      const entry: Entry = { loadedAt: now, value: load.then((loaded) => loaded.get(country)!) };
      slot.loading = entry;
      entries.set(country, entry);
      entry.value.then(
        () => {
          if (!slot.loaded || slot.loaded.loadedAt <= entry.loadedAt) slot.loaded = entry;
          if (slot.loading === entry) slot.loading = undefined;
        },
        // Handled here so a background read's failure is no unhandled rejection; a caller waiting
        // on it gets the error from its own await.
        () => {
          if (slot.loading === entry) slot.loading = undefined;
        },
      );
    }
    return entries;
  }
  /**
   * The cache as loadTransitStatistics(For) reads the country level; `loadedAt`, when given, is
   * filled with the time each country's statistics were loaded.
   */
  source(freshAsOf?: string, loadedAt?: Map<string, string>): CountryStatisticsSource {
    return async (countries, today) => {
      const found = await this.get(countries, today, freshAsOf);
      const result = new Map<string, CountryStatistics>();
      for (const [country, { statistics, loadedAt: at }] of found) {
        result.set(country, statistics);
        loadedAt?.set(country, at);
      }
      return result;
    };
  }
}

/** Shared by every caller of the process: a model that changed one would change them all. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
