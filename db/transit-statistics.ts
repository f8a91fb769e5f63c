// Tables: transit_history and carrier_conditions (the reads behind a prediction; their SQL text is
// db/transit-statistics-sql.ts).
// `loadTransitStatistics(For)`: what domain/prediction-model.ts needs for one destination, or for
// many at once (the bulk prediction refresh), read from the transit history and carrier conditions.
//
// Two statements, because their costs differ by an order of magnitude on a large country
// (bench/transit-statistics): the country level (its histogram and summary, and the sums by postal
// code and prefix behind the shrinkage weights) reads every delivery to the country in the
// look-back period, while the postal code and prefix levels and the operator delays read a few
// index ranges. db/country-statistics-cache.ts keeps the first per process; the second is read
// fresh for every projection write, so `conditions set|clear` and a new delivery to the code take
// effect at once. The bulk refresh holds the code and prefix levels for one run (db/area-level-cache.ts):
// read per page, a prefix level shared by every page was read once per page (bench/scale).
import type { LevelStatistics, OperatorDelay, TransitStatistics } from '../domain/prediction-model.js';
import { normalisePostalCode, postalPrefixOf } from '../domain/prediction-model.js';
import type { AreaMoments } from '../domain/statistics.js';
import type { Pool } from './pool.js';
import { AREA_SQL, COUNTRY_SQL } from './transit-statistics-sql.js';

export type Level = 'country' | 'prefix' | 'code';
type HistogramRow = [Level, string, string, number, number, number];
type RecentRow = [Level, string, string, number, number, number, number];
type InFlightRow = [Level, string, string, number, number];
export type LevelRows = LevelStatistics & {
  fit: number[];
  calibration: number[];
  recent: Array<[number, number, number, number]>;
  inFlight?: Array<[number, number]>;
};

/** A level's key in the maps below: `level COUNTRY key` (the country level's key is empty). */
export const levelKey = (level: Level, country: string, key: string) => `${level} ${country} ${key}`;

export function emptyLevel(): LevelRows {
  return { fit: [], calibration: [], recent: [] };
}

/** Each level's statistics by `level country key`, from a statement's histograms and recent counts. */
function levelsOf(rows: { histograms: HistogramRow[]; recent: RecentRow[]; in_flight?: InFlightRow[] }): Map<string, LevelRows> {
  const levels = new Map<string, LevelRows>();
  const levelOf = (level: Level, country: string, key: string) => {
    const id = levelKey(level, country, key);
    let stats = levels.get(id);
    if (!stats) levels.set(id, (stats = emptyLevel()));
    return stats;
  };
  for (const [level, country, key, days, fit, calibration] of rows.histograms) {
    const stats = levelOf(level, country, key);
    while (stats.fit.length <= days) stats.fit.push(0);
    while (stats.calibration.length <= days) stats.calibration.push(0);
    stats.fit[days] = Number(fit);
    stats.calibration[days] = Number(calibration);
  }
  for (const [level, country, key, sinceDays, days, count, byIssuers] of rows.recent)
    levelOf(level, country, key).recent.push([sinceDays, days, Number(count), Number(byIssuers)]);
  // The service's registrations still on their way (the area statement only): absent where none.
  for (const [level, country, key, sinceDays, count] of rows.in_flight ?? []) {
    const stats = levelOf(level, country, key);
    (stats.inFlight ??= []).push([sinceDays, Number(count)]);
  }
  return levels;
}

/** A country's own statistics: the expensive part of a prediction's inputs. */
export interface CountryStatistics {
  country: LevelStatistics;
  /** Null when the country has no mature delivery in the look-back period. */
  areaMoments: AreaMoments | null;
}

/** The country level and area moments of each country asked for (empty when it has no history). */
export async function loadCountryStatistics(
  pool: Pool,
  countries: readonly string[],
  today: string,
): Promise<Map<string, CountryStatistics>> {
  return countryStatisticsOf(pool, COUNTRY_SQL, countries, today);
}

/**
 * Each country's statistics from a statement of the country level's shape ($1: countries, $2:
 * today; histograms, recent, moments): COUNTRY_SQL, or the reference it is tested against.
 */
export async function countryStatisticsOf(
  pool: Pool,
  sql: string,
  countries: readonly string[],
  today: string,
): Promise<Map<string, CountryStatistics>> {
  const { rows } = await pool.query<{
    histograms: HistogramRow[];
    recent: RecentRow[];
    moments: Array<Record<string, number | string>>;
  }>(sql, [[...new Set(countries)], today]);
  const levels = levelsOf(rows[0]);
  const moments = new Map(rows[0].moments.map((m) => [String(m.country_code), areaMomentsOf(m)]));
  return new Map(
    countries.map((c) => [c, { country: levels.get(levelKey('country', c, '')) ?? emptyLevel(), areaMoments: moments.get(c) ?? null }]),
  );
}

/** A destination as the statistics are keyed: country and postal code as the caller gave them. */
export interface Destination {
  countryCode: string;
  postalCode: string;
}

/** The key of a destination in the map loadTransitStatisticsFor returns. */
export function destinationKey(destination: Destination): string {
  const country = destination.countryCode.toUpperCase();
  return `${country} ${normalisePostalCode(destination.postalCode, country)}`;
}

/** Where the country level comes from: read now (the default), or a per-process cache. */
export type CountryStatisticsSource = (countries: readonly string[], today: string) => Promise<Map<string, CountryStatistics>>;

/** Everything domain/prediction-model.ts needs for one destination. */
export async function loadTransitStatistics(
  pool: Pool,
  query: { countryCode: string; postalCode: string; today: string },
  countries?: CountryStatisticsSource,
): Promise<TransitStatistics> {
  const all = await loadTransitStatisticsFor(pool, [query], query.today, countries);
  return all.get(destinationKey(query))!;
}

/** Carrier conditions in force, as the area statement returns them. */
export interface DelayRow {
  country_code: string;
  postal_prefix: string | null;
  delay_days: number;
  until: string | null;
}

/** What the area statement read: levels keyed `code|prefix COUNTRY KEY`, and the delays in force. */
export interface AreaLevels {
  levels: Map<string, LevelRows>;
  delays: DelayRow[];
}

/** Which postal code and prefix levels to read (normalised, country upper case), and whose delays. */
export interface AreaRequest {
  codes: ReadonlyArray<{ country: string; code: string }>;
  prefixes: ReadonlyArray<{ country: string; prefix: string }>;
  countries: readonly string[];
}

/** Where the code and prefix levels and the delays come from: read now (the default), or a run's cache. */
export type AreaStatisticsSource = (request: AreaRequest, today: string) => Promise<AreaLevels>;

/** Reads the levels and the delays asked for, in one statement. */
export async function loadAreaLevels(pool: Pool, request: AreaRequest, today: string): Promise<AreaLevels> {
  const { rows } = await pool.query<{ histograms: HistogramRow[]; recent: RecentRow[]; in_flight: InFlightRow[]; delays: DelayRow[] }>({
    name: 'transit-statistics-areas',
    text: AREA_SQL,
    values: [
      request.codes.map((c) => c.country),
      request.codes.map((c) => c.code),
      request.prefixes.map((p) => p.country),
      request.prefixes.map((p) => p.prefix),
      today,
      [...new Set(request.countries)],
    ],
  });
  return { levels: levelsOf(rows[0]), delays: rows[0].delays };
}

/**
 * The statistics of many destinations (the bulk prediction refresh), keyed by destinationKey. Every
 * destination asked for is in the map, with empty levels when it has no history. The country level
 * comes from `countries`; the code and prefix levels and the operator delays from `areas` (read now
 * by default).
 */
export async function loadTransitStatisticsFor(
  pool: Pool,
  destinations: readonly Destination[],
  today: string,
  countries: CountryStatisticsSource = (list, day) => loadCountryStatistics(pool, list, day),
  areas: AreaStatisticsSource = (request, day) => loadAreaLevels(pool, request, day),
): Promise<Map<string, TransitStatistics>> {
  const targets = destinations.map((d) => {
    const country = d.countryCode.toUpperCase();
    const code = normalisePostalCode(d.postalCode, country);
    return { key: destinationKey(d), country, code, prefix: postalPrefixOf(code, country) };
  });
  const countryList = [...new Set(targets.map((t) => t.country))];
  const [byCountry, area] = await Promise.all([
    countries(countryList, today),
    areas({ codes: targets, prefixes: targets, countries: countryList }, today),
  ]);
  const result = new Map<string, TransitStatistics>();
  for (const t of targets) {
    const operatorDelays: OperatorDelay[] = area.delays
      .filter((d) => d.country_code === t.country && (d.postal_prefix === null || d.postal_prefix === t.prefix))
      .map((d) => ({ postalPrefix: d.postal_prefix, delayDays: d.delay_days, until: d.until }));
    const country = byCountry.get(t.country)!;
    result.set(t.key, {
      postalCode: area.levels.get(levelKey('code', t.country, t.code)) ?? emptyLevel(),
      postalPrefix: area.levels.get(levelKey('prefix', t.country, t.prefix)) ?? emptyLevel(),
      country: country.country,
      operatorDelays,
      areaMoments: country.areaMoments,
    });
  }
  return result;
}

function areaMomentsOf(row: Record<string, number | string>): AreaMoments {
  const n = (name: string) => Number(row[name]);
  return {
    deliveries: n('deliveries'),
    sum: n('sum'),
    sumOfSquares: n('sum_of_squares'),
    codeSquares: n('code_squares'),
    prefixSquares: n('prefix_squares'),
    codeWithinPrefixWeights: n('code_within_prefix_weights'),
    codeWeights: n('code_weights'),
    prefixWeights: n('prefix_weights'),
    codes: n('codes'),
    prefixes: n('prefixes'),
  };
}
