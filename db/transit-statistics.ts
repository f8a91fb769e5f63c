// Tables: transit_history and carrier_conditions (the reads behind a prediction).
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
import { MOMENT_CAP_DAYS, normalisePostalCode, postalPrefixOf, RECENT_DAYS } from '../domain/prediction-model.js';
import type { AreaMoments } from '../domain/statistics.js';
import type { Pool } from './pool.js';

/** How far back a prediction looks: two years keeps seasonality and drops carriers' old networks. */
export const LOOK_BACK_DAYS = 730;
/** Longer transits are counted as this many business days, so a histogram stays short. */
export const MAX_TRANSIT_DAYS = 60;

/**
 * In a level's long-run histograms an issuer's mature deliveries count for at most as many as every
 * other source of the level has together, or this many where the others are fewer
 * (docs/predictions.md "History and its bounds"): what a lone issuer's own deliveries weigh.
 * 100 for a postal code or prefix, twice the code history High asks for; 400 for a country, whose
 * held-out quarter (100) can then calibrate High's 97 % (calibrationSizeFor).
 */
export const ISSUER_WEIGHT_FLOOR = { code: 100, prefix: 100, country: 400 } as const;

/** The history rows of a level in the look-back period ($today is the statement's date parameter). */
export const inLookBack = (today: string) => `dispatch_date >= ${today}::date - ${LOOK_BACK_DAYS} AND delivered_date <= ${today}::date`;

/**
 * Which of an area's recent deliveries count (docs/predictions.md "History and its
 * bounds"): every imported one, and of each issuer's, its latest up to as many as every other
 * source of the area's recent deliveries has together, so no issuer weighs more than half of them
 * however many it records. (If an issuer is cut, every other has at least its count, so the bound
 * holds after the cut too.) Over rows with `partition` columns, `issuer_id`, `delivered_date`,
 * `business_days`, `dispatch_date` and an `is_recent` flag. Ties in the order differ in no counted
 * column, so the statistics do not depend on which of them is kept.
 */
export const countedAsRecent = (partition: string) => `
  is_recent AND (issuer_id IS NULL OR
    count(*) FILTER (WHERE is_recent) OVER (PARTITION BY ${partition}, issuer_id ORDER BY delivered_date DESC, business_days, dispatch_date ROWS UNBOUNDED PRECEDING)
      <= count(*) FILTER (WHERE is_recent) OVER (PARTITION BY ${partition})
       - count(*) FILTER (WHERE is_recent) OVER (PARTITION BY ${partition}, issuer_id))`;

/**
 * An issuer's deliveries of one group (`n` of them, by dispatch day and transit) as they count in a
 * level's long-run histograms (docs/predictions.md "History and its bounds"), over rows of
 * `partition` columns, `issuer_id`, `n` and `floor` that hold a level's mature deliveries by issuer:
 * imported ones in full, and each issuer's in full while it has no more than every other source of
 * the level together (or `floor`, where they are fewer), else scaled down to that many. Computed
 * from the counts, never the rows: the country level's statement must stay a pass of counting
 * (bench/transit-statistics).
 */
const weightedCount = (partition: string) => `
  CASE WHEN issuer_id IS NULL THEN n ELSE
    n * least(1, greatest(sum(n) OVER (PARTITION BY ${partition}) - sum(n) OVER (PARTITION BY ${partition}, issuer_id), floor)
                 / sum(n) OVER (PARTITION BY ${partition}, issuer_id)::numeric) END`;

// From a `levels` CTE (level, country_code, key, issuer_id, dispatch_date, delivered_date,
// business_days), each level's long-run history (dispatches at least RECENT_DAYS old) split by
// dispatch date into the older 75 % (fit) and the newest 25 % (held out for calibration), as
// histograms of business days, each issuer's weighed down to its cap in the level (weightedCount);
// and each level's recent deliveries (dispatches of the last RECENT_DAYS) counted by days since
// dispatch and transit, each issuer's capped (countedAsRecent): the model reads them for a shift and
// decides which are mature (domain/recent-change.ts). Every step is partitioned by level, so a
// level's numbers do not depend on which other levels the statement reads. The postal code and
// prefix levels are read with it; the country level's statement computes the same from counts, and
// is tested against it.
export const levelStatistics = (today: string) => `
flagged AS (
  SELECT level, country_code, key, issuer_id, dispatch_date, delivered_date, business_days, dispatch_date > ${today}::date - ${RECENT_DAYS} AS is_recent
  FROM levels
), counted AS (
  SELECT level, country_code, key, dispatch_date, business_days, ${countedAsRecent('level, country_code, key')} AS recent
  FROM flagged
), issuer_daily AS (
  SELECT level, country_code, key, issuer_id, dispatch_date, business_days, count(*) AS n,
         CASE level WHEN 'country' THEN ${ISSUER_WEIGHT_FLOOR.country} WHEN 'prefix' THEN ${ISSUER_WEIGHT_FLOOR.prefix} ELSE ${ISSUER_WEIGHT_FLOOR.code} END AS floor
  FROM levels WHERE dispatch_date <= ${today}::date - ${RECENT_DAYS} GROUP BY level, country_code, key, issuer_id, dispatch_date, business_days
), daily AS (
  SELECT level, country_code, key, dispatch_date, business_days, sum(n) AS n
  FROM (SELECT level, country_code, key, dispatch_date, business_days, ${weightedCount('level, country_code, key')} AS n FROM issuer_daily) weighted
  GROUP BY level, country_code, key, dispatch_date, business_days
), ranked AS (
  -- A delivery is held out when more than 75 % of its level's deliveries were dispatched on or
  -- before its day (its cume_dist by dispatch date), counted on the per-day totals: a window over
  -- the rows themselves spilled to disk on a large country.
  SELECT level, country_code, key, business_days, n,
         sum(n) OVER (PARTITION BY level, country_code, key ORDER BY dispatch_date) > 0.75 * sum(n) OVER (PARTITION BY level, country_code, key) AS held_out
  FROM daily
), histograms AS (
  SELECT level, country_code, key, business_days, coalesce(sum(n) FILTER (WHERE NOT held_out), 0) AS fit,
         coalesce(sum(n) FILTER (WHERE held_out), 0) AS calibration
  FROM ranked GROUP BY level, country_code, key, business_days
), recent_groups AS (
  SELECT level, country_code, key, ${today}::date - dispatch_date AS since_days, business_days, count(*) AS n
  FROM counted WHERE recent GROUP BY level, country_code, key, dispatch_date, business_days
)`;

export const LEVEL_COLUMNS = `
  (SELECT coalesce(json_agg(json_build_array(level, country_code, key, business_days, fit, calibration)), '[]') FROM histograms) AS histograms,
  (SELECT coalesce(json_agg(json_build_array(level, country_code, key, since_days, business_days, n) ORDER BY level, country_code, key, since_days, business_days), '[]') FROM recent_groups) AS recent`; // prettier-ignore

/**
 * Each country's sums by postal code and prefix over all its areas (AreaMoments, for the shrinkage
 * weights), from a `code_moments` CTE (country_code, postal_prefix, n, s, ss: one row per postal
 * code with mature deliveries, integers, transit capped at MOMENT_CAP_DAYS). The ratios are summed
 * in numeric: a float8 sum depends on the order its rows arrive in, which is the plan's.
 */
export const AREA_MOMENTS = `
prefix_moments AS (
  SELECT country_code, sum(n) AS n, sum(s) AS s, sum(ss) AS ss, sum(s * s / n::numeric) AS code_squares,
         sum(n * n) AS code_weights, count(*) AS codes
  FROM code_moments GROUP BY country_code, postal_prefix
), moments AS (
  SELECT country_code, sum(n) AS deliveries, sum(s) AS sum, sum(ss) AS sum_of_squares, sum(code_squares) AS code_squares,
         sum(s * s / n) AS prefix_squares, sum(code_weights / n) AS code_within_prefix_weights,
         sum(code_weights) AS code_weights, sum(n * n) AS prefix_weights, sum(codes) AS codes, count(*) AS prefixes
  FROM prefix_moments GROUP BY country_code
)`;

// The countries' level ($1: countries, $2: today) and their area moments: what levelStatistics and
// per-code sums over the country's rows give (test/db/country-statistics-sql.test.ts holds it to
// that), but each pass over the rows only counts them, by issuer, dispatch day and business days, and
// by postal code; everything after works on those few thousand counts (the issuers' weights too).
// Row by row, the rows kept for three passes spilled to disk: 0.8 s on 150,000 deliveries
// (bench/transit-statistics). Two plain GROUP BYs rather than GROUPING SETS: the planner hashes
// grouping sets only when it expects every hash table to fit in work_mem, and sorted (on disk) the
// rows of a large country otherwise.
const COUNTRY_SQL = `
WITH area AS NOT MATERIALIZED (
  SELECT country_code, postal_prefix, postal_code, issuer_id, dispatch_date, delivered_date, least(business_days, ${MAX_TRANSIT_DAYS}) AS business_days
  FROM transit_history WHERE country_code = ANY ($1::text[]) AND ${inLookBack('$2')}
), issuer_daily AS (
  -- Counted by issuer too (a few more groups, the same pass), for the issuers' weights (weightedCount).
  SELECT country_code, issuer_id, dispatch_date, business_days, count(*) AS n, ${ISSUER_WEIGHT_FLOOR.country} AS floor
  FROM area WHERE dispatch_date <= $2::date - ${RECENT_DAYS} GROUP BY country_code, issuer_id, dispatch_date, business_days
), mature_daily AS (
  SELECT country_code, dispatch_date, business_days, sum(n) AS n
  FROM (SELECT country_code, dispatch_date, business_days, ${weightedCount('country_code')} AS n FROM issuer_daily) weighted
  GROUP BY country_code, dispatch_date, business_days
), recent_counted AS (
  -- The recent dispatches with their issuer, through the dispatch-date index, each issuer's capped
  -- (countedAsRecent).
  SELECT country_code, dispatch_date, business_days, ${countedAsRecent('country_code')} AS recent
  FROM (SELECT country_code, issuer_id, dispatch_date, delivered_date, least(business_days, ${MAX_TRANSIT_DAYS}) AS business_days, true AS is_recent
          FROM transit_history
         WHERE country_code = ANY ($1::text[]) AND ${inLookBack('$2')} AND dispatch_date > $2::date - ${RECENT_DAYS}) recent_rows
), recent_groups AS (
  SELECT 'country' AS level, country_code, '' AS key, $2::date - dispatch_date AS since_days, business_days, count(*) AS n
  FROM recent_counted WHERE recent GROUP BY country_code, dispatch_date, business_days
), code_moments AS (
  SELECT country_code, postal_prefix, count(*) AS n, sum(x) AS s, sum(x * x) AS ss
  FROM (SELECT country_code, postal_prefix, postal_code, least(business_days, ${MOMENT_CAP_DAYS}) AS x FROM area WHERE dispatch_date <= $2::date - ${RECENT_DAYS}) mature
  GROUP BY country_code, postal_prefix, postal_code
), ranked AS (
  SELECT country_code, business_days, n,
         sum(n) OVER (PARTITION BY country_code ORDER BY dispatch_date) > 0.75 * sum(n) OVER (PARTITION BY country_code) AS held_out
  FROM mature_daily
), histograms AS (
  SELECT 'country' AS level, country_code, '' AS key, business_days, coalesce(sum(n) FILTER (WHERE NOT held_out), 0) AS fit,
         coalesce(sum(n) FILTER (WHERE held_out), 0) AS calibration
  FROM ranked GROUP BY country_code, business_days
), ${AREA_MOMENTS}
SELECT ${LEVEL_COLUMNS},
  (SELECT coalesce(json_agg(moments), '[]') FROM moments) AS moments`;

// Postal code levels ($1, $2: country and code of each), prefix levels ($3, $4: country and prefix
// of each), each read through its own index range ($5: today), and the operator delays in force in
// the countries $6. A destination's statistics need its code and its prefix; the bulk refresh asks
// only for those it has not read yet in the run (AreaLevelCache).
const AREA_SQL = `
WITH code_targets AS (
  SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS t (country_code, postal_code)
), prefix_targets AS (
  SELECT DISTINCT * FROM unnest($3::text[], $4::text[]) AS t (country_code, postal_prefix)
), levels AS (
  SELECT 'prefix' AS level, h.country_code, h.postal_prefix AS key, h.issuer_id, h.dispatch_date, h.delivered_date, least(h.business_days, ${MAX_TRANSIT_DAYS}) AS business_days
  FROM transit_history h JOIN prefix_targets t USING (country_code, postal_prefix)
  WHERE ${inLookBack('$5')}
  UNION ALL
  SELECT 'code', h.country_code, h.postal_code, h.issuer_id, h.dispatch_date, h.delivered_date, least(h.business_days, ${MAX_TRANSIT_DAYS})
  FROM transit_history h JOIN code_targets t USING (country_code, postal_code)
  WHERE ${inLookBack('$5')}
), ${levelStatistics('$5')}
SELECT ${LEVEL_COLUMNS},
  (SELECT coalesce(json_agg(json_build_object('country_code', country_code, 'postal_prefix', postal_prefix, 'delay_days', delay_days, 'until', until)), '[]')
     FROM carrier_conditions
    WHERE country_code = ANY ($6::text[]) AND cleared_at IS NULL AND (until IS NULL OR until >= $5::date)) AS delays`;

export type Level = 'country' | 'prefix' | 'code';
type HistogramRow = [Level, string, string, number, number, number];
type RecentRow = [Level, string, string, number, number, number];
export type LevelRows = LevelStatistics & { fit: number[]; calibration: number[]; recent: Array<[number, number, number]> };

/** A level's key in the maps below: `level COUNTRY key` (the country level's key is empty). */
export const levelKey = (level: Level, country: string, key: string) => `${level} ${country} ${key}`;

export function emptyLevel(): LevelRows {
  return { fit: [], calibration: [], recent: [] };
}

/** Each level's statistics by `level country key`, from a statement's histograms and recent counts. */
function levelsOf(rows: { histograms: HistogramRow[]; recent: RecentRow[] }): Map<string, LevelRows> {
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
  for (const [level, country, key, sinceDays, days, count] of rows.recent)
    levelOf(level, country, key).recent.push([sinceDays, days, Number(count)]);
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
  const { rows } = await pool.query<{ histograms: HistogramRow[]; recent: RecentRow[]; delays: DelayRow[] }>({
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
