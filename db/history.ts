// Writes of the transit history the prediction model learns from (DESIGN.md "Predictions"): the bulk
// write of `history import` (one COPY, streamed) and the service's own completed deliveries. The
// reads behind a prediction are in db/transit-statistics.ts.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { normalisePostalCode, postalPrefixOf } from '../domain/prediction-model.js';
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
