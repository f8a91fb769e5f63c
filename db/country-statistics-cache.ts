// A per-process cache of the expensive part of a prediction's inputs: each country's level and
// area moments (db/transit-statistics.ts loadCountryStatistics), which read every delivery to the
// country in the look-back period (about 1 s for 150,000 of them, bench/transit-statistics) and
// move by a hair with each new delivery. Every projection write and the bulk prediction refresh
// read through it; the postal code and prefix levels and the operator delays are never cached.
//
// An entry serves a caller when it was loaded for the same `today`, less than the TTL ago, and at
// or after the caller's `freshAsOf`. The refresh passes the time its attempt began, so each country
// is read once per run; it signals a dispatch with the time the entry it used was loaded, and the
// projection that follows passes that time on, so it never computes from older country statistics
// than the refresh did (otherwise it could write the old window, and every hourly run would signal
// the dispatch again).
import { loadCountryStatistics, type CountryStatistics, type CountryStatisticsSource } from './transit-statistics.js';
import type { Pool } from './pool.js';

/**
 * How long a registration or carrier event may predict from country statistics read earlier: a
 * `history import` reaches new registrations' country level within this (code and prefix levels at
 * once, and the next hourly refresh re-predicts every open dispatch from a fresh read).
 */
export const COUNTRY_STATISTICS_TTL_MS = 5 * 60_000;

interface Entry {
  /** Epoch ms at which the load began: everything committed before it is in the statistics. */
  loadedAt: number;
  value: Promise<CountryStatistics>;
}

export interface CountryStatisticsCacheOptions {
  ttlMs?: number;
  now?: () => Date;
}

export class CountryStatisticsCache {
  private readonly entries = new Map<string, Entry>();
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
   * less than the TTL ago and not before `freshAsOf` (ISO), else read now, all such countries in
   * one statement. Concurrent callers share a load in flight.
   */
  async get(
    countries: readonly string[],
    today: string,
    freshAsOf?: string,
  ): Promise<Map<string, { statistics: CountryStatistics; loadedAt: string }>> {
    const now = this.now().getTime();
    const notBefore = freshAsOf === undefined ? -Infinity : Date.parse(freshAsOf);
    for (const [key, entry] of this.entries) if (now - entry.loadedAt >= this.ttlMs) this.entries.delete(key);
    const wanted = [...new Set(countries)];
    const missing = wanted.filter((country) => {
      const entry = this.entries.get(`${country} ${today}`);
      return entry === undefined || entry.loadedAt < notBefore;
    });
    if (missing.length > 0) {
      const load = loadCountryStatistics(this.pool, missing, today).then((loaded) => {
        for (const statistics of loaded.values()) deepFreeze(statistics);
        return loaded;
      });
      for (const country of missing) {
        const key = `${country} ${today}`;
        const entry: Entry = { loadedAt: now, value: load.then((loaded) => loaded.get(country)!) };
        this.entries.set(key, entry);
        // A failed load is forgotten, so the next caller tries again; only its own entry, though.
        entry.value.catch(() => this.entries.get(key) === entry && this.entries.delete(key));
      }
    }
    const entries = wanted.map((country) => [country, this.entries.get(`${country} ${today}`)!] as const);
    return new Map(
      await Promise.all(
        entries.map(async ([country, entry]) => [country, { statistics: await entry.value, loadedAt: new Date(entry.loadedAt).toISOString() }] as const), // prettier-ignore
      ),
    );
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
