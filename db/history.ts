// Transit history and carrier conditions as the prediction model reads them (DESIGN.md
// "Predictions"): the bulk write of `history import` (one COPY, streamed), the service's own
// completed deliveries, and `loadTransitStatistics(For)`, the one query behind a prediction (for one
// destination, or for many at once in the bulk prediction refresh).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { LevelStatistics, OperatorDelay, TransitStatistics } from '../domain/prediction-model.js';
import { MATURITY_DAYS, MOMENT_CAP_DAYS, normalisePostalCode, postalPrefixOf, RECENT_DAYS } from '../domain/prediction-model.js';
import type { AreaMoments } from '../domain/statistics.js';
import type { Pool } from './pool.js';

/** One delivery, already validated and counted in business days of the destination country. */
export interface TransitRecord {
  postalCode: string;
  countryCode: string;
  dispatchDate: string;
  deliveredDate: string;
  businessDays: number;
}

export type TransitSource = 'import' | 'service';

/** How far back a prediction looks: two years keeps seasonality and drops carriers' old networks. */
export const LOOK_BACK_DAYS = 730;
/** Longer transits are counted as this many business days, so a histogram stays short. */
const MAX_TRANSIT_DAYS = 60;
/** Rows per chunk written to the COPY stream: large enough to be cheap, small enough to stream. */
const COPY_CHUNK_ROWS = 2_000;

/** COPY text format: backslash, tab and line breaks inside a value must be escaped. */
function copyField(value: string): string {
  return value.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c] ?? c);
}

function copyLine(row: TransitRecord, source: TransitSource): string {
  const code = normalisePostalCode(row.postalCode, row.countryCode);
  const prefix = postalPrefixOf(code, row.countryCode);
  return `${[copyField(code), row.countryCode, copyField(prefix), row.dispatchDate, row.deliveredDate, String(row.businessDays), source].join('\t')}\n`; // prettier-ignore
}

async function* copyChunks(rows: AsyncIterable<TransitRecord>, source: TransitSource, counter: { rows: number }) {
  let chunk = '';
  let inChunk = 0;
  for await (const row of rows) {
    chunk += copyLine(row, source);
    counter.rows += 1;
    inChunk += 1;
    if (inChunk === COPY_CHUNK_ROWS) {
      yield chunk;
      chunk = '';
      inChunk = 0;
    }
  }
  if (chunk) yield chunk;
}

/**
 * Streams rows into transit_history with one COPY in one transaction: all of them or, if the
 * database fails midway, none (a rerun then imports the file once). Returns how many were written.
 */
export async function copyTransitHistory(
  pool: Pool,
  rows: AsyncIterable<TransitRecord>,
  source: TransitSource = 'import',
): Promise<number> {
  const client = await pool.connect();
  const counter = { rows: 0 };
  try {
    await client.query('BEGIN');
    const copy = client.query(
      copyFrom(
        'COPY transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source) FROM STDIN',
      ),
    );
    await pipeline(Readable.from(copyChunks(rows, source, counter)), copy);
    await client.query('COMMIT');
    return counter.rows;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A delivery the service itself saw completed joins the history (DESIGN.md "Predictions"), once per
 * dispatch however often the activity is retried.
 */
export async function recordServiceDelivery(pool: Pool, dispatchId: string, row: TransitRecord): Promise<void> {
  const code = normalisePostalCode(row.postalCode, row.countryCode);
  await pool.query(
    `INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source, dispatch_id)
     VALUES ($1, $2, $3, $4, $5, $6, 'service', $7) ON CONFLICT (dispatch_id) DO NOTHING`,
    [code, row.countryCode, postalPrefixOf(code, row.countryCode), row.dispatchDate, row.deliveredDate, row.businessDays, dispatchId],
  );
}

// One statement for any number of destinations: over the look-back period, each destination
// country's history is read once, and every history row counts for its country, for its postal
// prefix and for its postal code when that prefix or code is one of the destinations'. Each level is
// split by dispatch date into the older 75 % (fit) and the newest 25 % (held out for calibration),
// as histograms of business days (dispatches younger than MATURITY_DAYS left out); each level's
// long-run and recent medians and how many recent deliveries were slower than the norm; each
// country's sums by postal code and prefix over all its areas (AreaMoments, for the shrinkage
// weights); and the operator delays in force in the destination countries.
const STATISTICS_SQL = `
WITH targets AS (
  SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[]) AS t (country_code, postal_code, postal_prefix)
), area AS (
  SELECT country_code, postal_code, postal_prefix, dispatch_date, delivered_date,
         (country_code, postal_code) IN (SELECT country_code, postal_code FROM targets) AS in_code,
         (country_code, postal_prefix) IN (SELECT country_code, postal_prefix FROM targets) AS in_prefix,
         least(business_days, ${MAX_TRANSIT_DAYS}) AS business_days
  FROM transit_history
  WHERE country_code IN (SELECT country_code FROM targets) AND dispatch_date >= $4::date - ${LOOK_BACK_DAYS} AND delivered_date <= $4::date
), levels AS (
  SELECT 'country' AS level, country_code, '' AS key, dispatch_date, delivered_date, business_days FROM area
  UNION ALL SELECT 'prefix', country_code, postal_prefix, dispatch_date, delivered_date, business_days FROM area WHERE in_prefix
  UNION ALL SELECT 'code', country_code, postal_code, dispatch_date, delivered_date, business_days FROM area WHERE in_code
), daily AS (
  SELECT level, country_code, key, dispatch_date, business_days, count(*) AS n
  FROM levels WHERE dispatch_date < $4::date - ${MATURITY_DAYS} GROUP BY level, country_code, key, dispatch_date, business_days
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
), medians AS (
  SELECT level, country_code, key, percentile_cont(0.5) WITHIN GROUP (ORDER BY business_days) AS long_run_median,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY business_days) FILTER (WHERE delivered_date > $4::date - ${RECENT_DAYS}) AS recent_median
  FROM levels GROUP BY level, country_code, key
), recent_by_days AS (
  SELECT level, country_code, key, business_days, count(*) FILTER (WHERE delivered_date > $4::date - ${RECENT_DAYS}) AS recent
  FROM levels GROUP BY level, country_code, key, business_days
), summaries AS (
  -- From the per-day counts rather than the rows again: a join of every row with its median was
  -- the slowest step of the query on a large country.
  SELECT level, country_code, key, m.long_run_median, m.recent_median, sum(r.recent) AS recent_count,
         coalesce(sum(r.recent) FILTER (WHERE r.business_days > m.long_run_median), 0) AS recent_slower
  FROM medians m JOIN recent_by_days r USING (level, country_code, key) GROUP BY level, country_code, key, m.long_run_median, m.recent_median
), code_moments AS (
  SELECT country_code, postal_prefix, count(*)::float8 AS n, sum(x)::float8 AS s, sum(x * x)::float8 AS ss
  FROM (SELECT country_code, postal_prefix, postal_code, least(business_days, ${MOMENT_CAP_DAYS}) AS x
        FROM area WHERE dispatch_date < $4::date - ${MATURITY_DAYS}) mature
  GROUP BY country_code, postal_prefix, postal_code
), prefix_moments AS (
  SELECT country_code, sum(n) AS n, sum(s) AS s, sum(ss) AS ss, sum(s * s / n) AS code_squares,
         sum(n * n) AS code_weights, count(*) AS codes
  FROM code_moments GROUP BY country_code, postal_prefix
), moments AS (
  SELECT country_code, sum(n) AS deliveries, sum(s) AS sum, sum(ss) AS sum_of_squares, sum(code_squares) AS code_squares,
         sum(s * s / n) AS prefix_squares, sum(code_weights / n) AS code_within_prefix_weights,
         sum(code_weights) AS code_weights, sum(n * n) AS prefix_weights, sum(codes) AS codes, count(*) AS prefixes
  FROM prefix_moments GROUP BY country_code
)
SELECT
  (SELECT coalesce(json_agg(json_build_array(level, country_code, key, business_days, fit, calibration)), '[]') FROM histograms) AS histograms,
  (SELECT coalesce(json_agg(json_build_array(level, country_code, key, long_run_median, recent_count, recent_median, recent_slower)), '[]') FROM summaries) AS summaries,
  (SELECT coalesce(json_agg(moments), '[]') FROM moments) AS moments,
  (SELECT coalesce(json_agg(json_build_object('country_code', country_code, 'postal_prefix', postal_prefix, 'delay_days', delay_days, 'until', until)), '[]')
     FROM carrier_conditions
    WHERE country_code IN (SELECT country_code FROM targets) AND cleared_at IS NULL AND (until IS NULL OR until >= $4::date)) AS delays`;

type Level = 'country' | 'prefix' | 'code';
type LevelRows = LevelStatistics & { fit: number[]; calibration: number[] };

function emptyLevel(): LevelRows {
  return { fit: [], calibration: [], recent: { count: 0, median: null, slowerThanNorm: 0 }, longRunMedian: null };
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

/** Everything domain/prediction-model.ts needs for one destination, read in one query. */
export async function loadTransitStatistics(
  pool: Pool,
  query: { countryCode: string; postalCode: string; today: string },
): Promise<TransitStatistics> {
  const all = await loadTransitStatisticsFor(pool, [query], query.today);
  return all.get(destinationKey(query))!;
}

/**
 * The statistics of many destinations in one query (the bulk prediction refresh), keyed by
 * destinationKey. Every destination asked for is in the map, with empty levels when it has no history.
 */
export async function loadTransitStatisticsFor(
  pool: Pool,
  destinations: readonly Destination[],
  today: string,
): Promise<Map<string, TransitStatistics>> {
  const targets = destinations.map((d) => {
    const country = d.countryCode.toUpperCase();
    const code = normalisePostalCode(d.postalCode, country);
    return { key: destinationKey(d), country, code, prefix: postalPrefixOf(code, country) };
  });
  const { rows } = await pool.query<{
    histograms: Array<[Level, string, string, number, number, number]>;
    summaries: Array<[Level, string, string, number | null, number, number | null, number]>;
    delays: Array<{ country_code: string; postal_prefix: string | null; delay_days: number; until: string | null }>;
    moments: Array<Record<string, number | string>>;
  }>(STATISTICS_SQL, [targets.map((t) => t.country), targets.map((t) => t.code), targets.map((t) => t.prefix), today]);
  // Each level's statistics once, shared by every destination in it (country, country+prefix, country+code).
  const levels = new Map<string, LevelRows>();
  const levelOf = (level: Level, country: string, key: string) => {
    const id = `${level} ${country} ${key}`;
    let stats = levels.get(id);
    if (!stats) levels.set(id, (stats = emptyLevel()));
    return stats;
  };
  for (const [level, country, key, days, fit, calibration] of rows[0].histograms) {
    const stats = levelOf(level, country, key);
    while (stats.fit.length <= days) stats.fit.push(0);
    while (stats.calibration.length <= days) stats.calibration.push(0);
    stats.fit[days] = Number(fit);
    stats.calibration[days] = Number(calibration);
  }
  for (const [level, country, key, longRunMedian, recentCount, recentMedian, recentSlower] of rows[0].summaries) {
    const stats = levelOf(level, country, key);
    stats.longRunMedian = longRunMedian;
    stats.recent = { count: Number(recentCount), median: recentMedian, slowerThanNorm: Number(recentSlower) };
  }
  const moments = new Map(rows[0].moments.map((m) => [String(m.country_code), areaMomentsOf(m)]));
  const result = new Map<string, TransitStatistics>();
  for (const t of targets) {
    const operatorDelays: OperatorDelay[] = rows[0].delays
      .filter((d) => d.country_code === t.country && (d.postal_prefix === null || d.postal_prefix === t.prefix))
      .map((d) => ({ postalPrefix: d.postal_prefix, delayDays: d.delay_days, until: d.until }));
    result.set(t.key, {
      postalCode: levelOf('code', t.country, t.code),
      postalPrefix: levelOf('prefix', t.country, t.prefix),
      country: levelOf('country', t.country, ''),
      operatorDelays,
      areaMoments: moments.get(t.country) ?? null,
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
