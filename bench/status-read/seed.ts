// Seeds the dispatch projection for the status-read benchmark: one issuer, one live API key with
// `status:read`, and N live dispatches inserted in one set-based statement (generate_series).
// The read path only reads `dispatches`, so the rows are written straight in SQL rather than
// through workflows; each row's `record` is still made by the real domain code (prediction,
// ui suggestion, buildStatusRecord), from a few dozen templates whose id is swapped per row.
import { canonicalJson } from '../../domain/canonical-json.js';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import type { CurrentStatus } from '../../domain/state-machine.js';
import type { DispatchStatus, ExceptionReason } from '../../domain/vocabulary.js';
import type { Pool } from '../../db/pool.js';
import { renderSuggestion } from '../../domain/messages.js';
import { predict } from '../../domain/prediction.js';
import { buildStatusRecord } from '../../domain/status-record.js';

export interface Seeded {
  issuerId: string;
  keyId: string;
  /** The whole API key (Bearer token). */
  key: string;
  /** Ids of the seeded dispatches, lowercase UUID v4. */
  ids: string[];
  seedMs: number;
}

/** Stands for the row's id in a template; replaced by the row's own id in SQL. */
const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000';

const DESTINATIONS = [
  { postal_code: '75011', country_code: 'FR', locale: 'fr-FR' },
  { postal_code: '69003', country_code: 'FR' },
  { postal_code: '10115', country_code: 'DE' },
  { postal_code: 'SW1A 1AA', country_code: 'GB', locale: 'en-GB' },
  { postal_code: '94105', country_code: 'US', locale: 'en-US' },
  { postal_code: '28013', country_code: 'ES' },
  { postal_code: '1012 AB', country_code: 'NL' },
  { postal_code: 'H2X 1Y4', country_code: 'CA', locale: 'fr-CA' },
];

const STATES: Array<{ status: DispatchStatus; afterDays: number; exceptionReason?: ExceptionReason }> = [
  { status: 'dispatched', afterDays: 0 },
  { status: 'in_transit', afterDays: 1 },
  { status: 'out_for_delivery', afterDays: 2 },
  { status: 'delivered', afterDays: 3 },
  { status: 'exception', afterDays: 2, exceptionReason: 'failed_attempt' },
];

interface Template {
  i: number;
  version: number;
  status: string;
  dispatch_date: string;
  postal_code: string;
  country_code: string;
  locale: string | null;
  registration: string;
  window_min: string;
  window_max: string;
  confidence_level: string;
  exception_reason: string | null;
  record: string;
}

/** One template per (destination, status), built exactly as the projection activity builds a row. */
export function buildTemplates(now: Date = new Date()): Template[] {
  const today = now.toISOString().slice(0, 10);
  const dispatchDate = new Date(now.getTime() - 2 * 86_400_000).toISOString();
  const templates: Template[] = [];
  for (const destination of DESTINATIONS) {
    for (const { status, afterDays, exceptionReason } of STATES) {
      const state: CurrentStatus = {
        status,
        statusSince: new Date(Date.parse(dispatchDate) + afterDays * 86_400_000).toISOString(),
        exceptionReason,
      };
      const dest = { postal_code: destination.postal_code, country_code: destination.country_code };
      const prediction = predict({ dispatchDate, destination: dest, state, today });
      const suggestion = renderSuggestion({
        status,
        window: prediction.window,
        confidence: prediction.confidence,
        exceptionReason,
        registeredLocale: destination.locale,
        countryCode: dest.country_code,
      });
      const record = buildStatusRecord({ id: PLACEHOLDER_ID, status, dispatchDate, destination: dest, prediction, suggestion });
      templates.push({
        i: templates.length,
        version: STATES.findIndex((s) => s.status === status) + 1,
        status,
        dispatch_date: dispatchDate,
        postal_code: dest.postal_code,
        country_code: dest.country_code,
        locale: destination.locale ?? null,
        registration: canonicalJson({ dispatch_date: dispatchDate, destination: dest, locale: destination.locale }),
        window_min: prediction.window.min,
        window_max: prediction.window.max,
        confidence_level: prediction.confidence,
        exception_reason: exceptionReason ?? null,
        record: JSON.stringify(record),
      });
    }
  }
  return templates;
}

// Row g takes template g % T; gen_random_uuid() is a UUID v4, as the API requires. `replace` on the
// record's text keeps the field order buildStatusRecord wrote (a jsonb round trip would not).
const INSERT_ROWS = `
  INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, locale,
                          registration, window_min, window_max, confidence_level, exception_reason, record)
  SELECT d.id, $1, 'live', t.version, t.status, t.dispatch_date, t.postal_code, t.country_code, t.locale,
         t.registration::jsonb, t.window_min, t.window_max, t.confidence_level, t.exception_reason,
         replace(t.record, '${PLACEHOLDER_ID}', d.id::text)::json
    FROM (SELECT gen_random_uuid() AS id, g FROM generate_series(1, $2::int) AS g) AS d
    JOIN jsonb_to_recordset($3::jsonb) AS t(i int, version bigint, status text, dispatch_date timestamptz,
         postal_code text, country_code text, locale text, registration text, window_min date, window_max date,
         confidence_level text, exception_reason text, record text)
      ON t.i = d.g % $4::int`;

export async function seed(pool: Pool, rows: number): Promise<Seeded> {
  const started = performance.now();
  const issuer = await createIssuer(pool, `status-read benchmark ${new Date().toISOString()}`);
  const key = await createApiKey(pool, { issuerId: issuer.id, scopes: ['status:read'], mode: 'live' });
  if (!key) throw new Error('could not create the benchmark API key');
  const templates = buildTemplates();
  await pool.query(INSERT_ROWS, [issuer.id, rows, JSON.stringify(templates), templates.length]);
  // Hint bits and statistics now, so the first round does not pay for them.
  await pool.query('VACUUM (ANALYZE) dispatches');
  const { rows: idRows } = await pool.query<{ id: string }>('SELECT id::text AS id FROM dispatches WHERE issuer_id = $1', [issuer.id]);
  return {
    issuerId: issuer.id,
    keyId: key.id,
    key: key.key,
    ids: idRows.map((r) => r.id),
    seedMs: Math.round(performance.now() - started),
  };
}

/** Removes what `seed` added (for a DATABASE_URL that outlives the benchmark). */
export async function unseed(pool: Pool, seeded: Pick<Seeded, 'issuerId' | 'keyId'>): Promise<void> {
  await pool.query('DELETE FROM dispatches WHERE issuer_id = $1', [seeded.issuerId]);
  await pool.query('DELETE FROM rate_limit_windows WHERE subject = $1', [`key:${seeded.keyId}`]);
  await pool.query('DELETE FROM api_keys WHERE issuer_id = $1', [seeded.issuerId]);
  await pool.query('DELETE FROM issuers WHERE id = $1', [seeded.issuerId]);
}
