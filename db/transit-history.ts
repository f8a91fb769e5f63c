// Tables: transit_history (the writes; db/transit-statistics.ts reads it).
// Writes of the transit history the prediction model learns from (docs/predictions.md): the bulk
// write of `history import` (one COPY, streamed) and the service's own completed deliveries, which
// join only when reported promptly and within plausibility bounds, and keep their issuer (docs/predictions.md "History and its
// bounds"). The reads behind a prediction are in db/transit-statistics.ts.
import { notifyTransitStatisticsChanged } from './area-statistics-cache.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { MIN_COUNTRY_HISTORY, normalisePostalCode, postalPrefixOf } from '../domain/prediction-model.js';
import { LOOK_BACK_DAYS, PROMPT_REGISTRATION_DAYS } from './transit-statistics-sql.js';
import type { NotLearnedReason } from '../domain/vocabulary.js';
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
    // Every worker's area cache forgets what it read (db/area-statistics-cache.ts), at the commit.
    await notifyTransitStatisticsChanged(client);
    await client.query('COMMIT');
    return counter.rows;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** A service delivery may take at most this many times the country's 99th percentile transit... */
export const PLAUSIBLE_TRANSIT_FACTOR = 3;
/** ...and never less than this many business days (a country whose mail nearly always takes a day). */
export const PLAUSIBLE_TRANSIT_FLOOR_DAYS = 5;
/** Without MIN_COUNTRY_HISTORY deliveries to compare with, at most six weeks of business days. */
export const PLAUSIBLE_TRANSIT_CAP_DAYS = 30;
/** A live delivery is evidence only if its dispatch was registered at most this many days after its dispatch date... */
export { PROMPT_REGISTRATION_DAYS };
/** ...and its delivered event received at most this many days after it occurred (docs/predictions.md "History and its bounds"). */
export const PROMPT_DELIVERY_REPORT_DAYS = 3;
/**
 * The country's norm is read from its latest this many deliveries, from the index alone
 * (transit_history_recent_idx): a large country costs the same as a small one.
 */
const NORM_SAMPLE = 10_000;

/**
 * A delivery the service itself saw completed joins the history (docs/predictions.md), once per
 * dispatch however often the activity is retried, with the issuer of its dispatch (whose row the
 * first projection wrote before any carrier event could arrive; a delivery recorded without a
 * dispatch row, which only a test does, has none and is not checked for promptness). It joins only
 * if reported promptly and within plausibility bounds (docs/predictions.md "History and its
 * bounds"): its dispatch registered (the row's created_at, which later projections keep) at most
 * PROMPT_REGISTRATION_DAYS after its dispatch date (else `late_registration`), and a delivered event
 * for its delivered date received (carrier_events.received_at, logged by the API as it arrived) at
 * most PROMPT_DELIVERY_REPORT_DAYS after it occurred (else `late_report`), so no one can back-date
 * deliveries into the mature history; delivered on or after its dispatch date (else
 * `delivered_before_dispatch`), and in at most PLAUSIBLE_TRANSIT_FACTOR × the 99th percentile
 * transit of the country's deliveries from every other source (so an issuer cannot raise its own
 * bound), never below PLAUSIBLE_TRANSIT_FLOOR_DAYS; at most PLAUSIBLE_TRANSIT_CAP_DAYS where fewer
 * than MIN_COUNTRY_HISTORY deliveries say what normal is (else `implausible`). A late or implausible
 * delivery still completes its dispatch, fires its webhooks and counts in the published accuracy
 * (db/dispatch-changes.ts keeps its outcome with these reasons); it only teaches the model nothing.
 *
 * The country's norm is its deliveries of the LOOK_BACK_DAYS before `today` ('YYYY-MM-DD'), the day
 * the caller predicts as of (activities/projection.ts `now`), never Postgres's current_date: a
 * worker given a clock, and a test run as of a date, judge by the same two years their statistics read.
 *
 * Returns whether this call added the row, and every reason the model does not learn from the
 * delivery (none when it joined, now or on an earlier attempt: a retry finds the row and says so).
 */
export async function judgeServiceDelivery(
  pool: Pool,
  dispatchId: string,
  row: TransitRecord,
  today: string,
): Promise<{ recorded: boolean; notLearned: NotLearnedReason[] }> {
  const code = normalisePostalCode(row.postalCode, row.countryCode);
  const { rows } = await pool.query<{ recorded: number; not_learned: NotLearnedReason[] }>(
    `WITH dispatch AS (
       SELECT x.id, d.issuer_id, d.created_at, d.dispatch_date
         FROM (SELECT $7::uuid AS id) x LEFT JOIN dispatches d ON d.id = x.id
     ), norm AS (
       SELECT count(*) AS n, percentile_disc(0.99) WITHIN GROUP (ORDER BY business_days) AS p99
         FROM (SELECT business_days FROM transit_history h, dispatch
                WHERE h.country_code = $2 AND h.delivered_date >= $8::date - ${LOOK_BACK_DAYS}
                  AND (dispatch.issuer_id IS NULL OR h.issuer_id IS DISTINCT FROM dispatch.issuer_id)
                ORDER BY h.delivered_date DESC LIMIT ${NORM_SAMPLE}) latest
     ), judged AS (
       SELECT d.id, d.issuer_id,
              EXISTS (SELECT 1 FROM transit_history h WHERE h.dispatch_id = d.id) AS known,
              array_remove(ARRAY[
                CASE WHEN d.created_at > d.dispatch_date + ${PROMPT_REGISTRATION_DAYS} * interval '1 day' THEN 'late_registration' END,
                CASE WHEN d.created_at IS NOT NULL AND NOT EXISTS (
                       SELECT 1 FROM carrier_events e
                        WHERE e.dispatch_id = d.id AND e.status = 'delivered' AND (e.occurred_at AT TIME ZONE 'UTC')::date = $5::date
                          AND e.received_at <= e.occurred_at + ${PROMPT_DELIVERY_REPORT_DAYS} * interval '1 day') THEN 'late_report' END,
                CASE WHEN $5::date < $4::date THEN 'delivered_before_dispatch' END,
                CASE WHEN $6 > CASE WHEN norm.n >= ${MIN_COUNTRY_HISTORY} THEN greatest(${PLAUSIBLE_TRANSIT_FACTOR} * norm.p99, ${PLAUSIBLE_TRANSIT_FLOOR_DAYS})
                                    ELSE ${PLAUSIBLE_TRANSIT_CAP_DAYS} END THEN 'implausible' END
              ], NULL) AS reasons
         FROM dispatch d, norm
     ), inserted AS (
       INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source, dispatch_id, issuer_id)
       SELECT $1, $2, $3, $4::date, $5::date, $6, 'service', j.id, j.issuer_id FROM judged j
        WHERE NOT j.known AND cardinality(j.reasons) = 0
          -- an erased (or erasing) dispatch is not linked again: a run that outlived its erasure
          AND NOT EXISTS (SELECT 1 FROM erasures e WHERE e.dispatch_id = j.id)
       ON CONFLICT (dispatch_id) DO NOTHING
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM inserted)::int AS recorded,
            CASE WHEN known THEN '{}'::text[] ELSE reasons END AS not_learned
       FROM judged`,
    [code, row.countryCode, postalPrefixOf(code, row.countryCode), row.dispatchDate, row.deliveredDate, row.businessDays, dispatchId, today], // prettier-ignore
  );
  return { recorded: rows[0].recorded === 1, notLearned: rows[0].not_learned };
}

/** judgeServiceDelivery, saying only whether the row was added. */
export async function recordServiceDelivery(pool: Pool, dispatchId: string, row: TransitRecord, today: string): Promise<boolean> {
  return (await judgeServiceDelivery(pool, dispatchId, row, today)).recorded;
}
