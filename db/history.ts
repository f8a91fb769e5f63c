// Transit history and carrier conditions as the prediction model reads them (DESIGN.md
// "Predictions"): the bulk write of `history import` (one COPY, streamed), the service's own
// completed deliveries, and `loadTransitStatistics`, the one query behind a prediction.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { LevelStatistics, OperatorDelay, TransitStatistics } from '../domain/prediction-model.js';
import { MATURITY_DAYS, normalisePostalCode, postalPrefixOf, RECENT_DAYS } from '../domain/prediction-model.js';
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

// One statement: the destination's country, prefix and postal code levels over the look-back
// period, each split by dispatch date into the older 75 % (fit) and the newest 25 % (held out for
// calibration), as histograms of business days (dispatches younger than MATURITY_DAYS left out); each level's long-run and recent medians and how many recent deliveries were slower than the norm; and the
// operator delays in force for the destination.
const STATISTICS_SQL = `
WITH area AS (
  SELECT postal_code = $2 AS in_code, postal_prefix = $3 AS in_prefix, dispatch_date, delivered_date,
         least(business_days, ${MAX_TRANSIT_DAYS}) AS business_days
  FROM transit_history
  WHERE country_code = $1 AND dispatch_date >= $4::date - ${LOOK_BACK_DAYS} AND delivered_date <= $4::date
), levels AS (
  SELECT 'country' AS level, dispatch_date, delivered_date, business_days FROM area
  UNION ALL SELECT 'prefix', dispatch_date, delivered_date, business_days FROM area WHERE in_prefix
  UNION ALL SELECT 'code', dispatch_date, delivered_date, business_days FROM area WHERE in_code
), ranked AS (
  SELECT level, business_days, cume_dist() OVER (PARTITION BY level ORDER BY dispatch_date) > 0.75 AS held_out
  FROM levels WHERE dispatch_date < $4::date - ${MATURITY_DAYS}
), histograms AS (
  SELECT level, business_days, count(*) FILTER (WHERE NOT held_out) AS fit, count(*) FILTER (WHERE held_out) AS calibration
  FROM ranked GROUP BY level, business_days
), medians AS (
  SELECT level, percentile_cont(0.5) WITHIN GROUP (ORDER BY business_days) AS long_run_median,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY business_days) FILTER (WHERE delivered_date > $4::date - ${RECENT_DAYS}) AS recent_median
  FROM levels GROUP BY level
), summaries AS (
  SELECT level, m.long_run_median, m.recent_median,
         count(*) FILTER (WHERE delivered_date > $4::date - ${RECENT_DAYS}) AS recent_count,
         count(*) FILTER (WHERE delivered_date > $4::date - ${RECENT_DAYS} AND business_days > m.long_run_median) AS recent_slower
  FROM levels JOIN medians m USING (level) GROUP BY level, m.long_run_median, m.recent_median
)
SELECT
  (SELECT coalesce(json_agg(json_build_array(level, business_days, fit, calibration)), '[]') FROM histograms) AS histograms,
  (SELECT coalesce(json_agg(json_build_array(level, long_run_median, recent_count, recent_median, recent_slower)), '[]') FROM summaries) AS summaries,
  (SELECT coalesce(json_agg(json_build_object('postal_prefix', postal_prefix, 'delay_days', delay_days, 'until', until)), '[]')
     FROM carrier_conditions
    WHERE country_code = $1 AND cleared_at IS NULL AND (until IS NULL OR until >= $4::date)
      AND (postal_prefix IS NULL OR postal_prefix = $3)) AS delays`;

type Level = 'country' | 'prefix' | 'code';

function emptyLevel(): LevelStatistics & { fit: number[]; calibration: number[] } {
  return { fit: [], calibration: [], recent: { count: 0, median: null, slowerThanNorm: 0 }, longRunMedian: null };
}

/** Everything domain/prediction-model.ts needs for one destination, read in one query. */
export async function loadTransitStatistics(
  pool: Pool,
  query: { countryCode: string; postalCode: string; today: string },
): Promise<TransitStatistics> {
  const country = query.countryCode.toUpperCase();
  const code = normalisePostalCode(query.postalCode, country);
  const { rows } = await pool.query<{
    histograms: Array<[Level, number, number, number]>;
    summaries: Array<[Level, number | null, number, number | null, number]>;
    delays: Array<{ postal_prefix: string | null; delay_days: number; until: string | null }>;
  }>(STATISTICS_SQL, [country, code, postalPrefixOf(code, country), query.today]);
  const levels = { country: emptyLevel(), prefix: emptyLevel(), code: emptyLevel() };
  for (const [level, days, fit, calibration] of rows[0].histograms) {
    const stats = levels[level];
    while (stats.fit.length <= days) stats.fit.push(0);
    while (stats.calibration.length <= days) stats.calibration.push(0);
    stats.fit[days] = Number(fit);
    stats.calibration[days] = Number(calibration);
  }
  for (const [level, longRunMedian, recentCount, recentMedian, recentSlower] of rows[0].summaries) {
    levels[level].longRunMedian = longRunMedian;
    levels[level].recent = { count: Number(recentCount), median: recentMedian, slowerThanNorm: Number(recentSlower) };
  }
  const operatorDelays: OperatorDelay[] = rows[0].delays.map((d) => ({ postalPrefix: d.postal_prefix, delayDays: d.delay_days, until: d.until })); // prettier-ignore
  return { postalCode: levels.code, postalPrefix: levels.prefix, country: levels.country, operatorDelays };
}
