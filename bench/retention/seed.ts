// Seeds completed dispatches straight in Postgres, with the rows a typical life leaves (the retention
// benchmark and test/e2e/retention-crash.test.ts): per dispatch, its projection (delivered, last
// changed `lastChangeAgoMs` ago), 3 carrier events with locations (received by then, the last at that change), 4 prediction log versions, 4 webhook
// events with their bodies, each delivered to one endpoint in one attempt (request headers recorded),
// one tracking link with a gate pass, and its transit history row. The record and bodies are made by
// the real domain code (bench/status-read/seed.ts buildTemplates). No Temporal run is created: a
// completed run that the namespace's retention already deleted looks the same to the sweep.
import { randomBytes } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import { buildTemplates } from '../status-read/seed.js';

const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000';

/** Tables the seed writes, with how many rows one dispatch has in each. */
export const ROWS_PER_DISPATCH = {
  dispatches: 1,
  carrier_events: 3,
  prediction_log: 4,
  webhook_events: 4,
  webhook_deliveries: 4,
  delivery_attempts: 4,
  tracking_links: 1,
  tracking_gate_passes: 1,
  transit_history: 1,
} as const;

const EVENT_TYPES = ['delivery.predicted', 'status.updated', 'status.updated', 'delivery.completed'];
const CARRIER_STATUSES = ['in_transit', 'out_for_delivery', 'delivered'];

const INSERT = `
WITH ids AS (
  SELECT gen_random_uuid() AS id, g FROM generate_series(1, $3::int) AS g
), t AS (
  SELECT * FROM jsonb_to_recordset($4::jsonb) AS t(i int, version bigint, status text, dispatch_date timestamptz, postal_code text,
         country_code text, locale text, registration text, window_min date, window_max date, confidence_level text, record text)
), d AS (
  INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, locale, carrier, tracking_number,
                          reference, registration, window_min, window_max, confidence_level, record, created_at, updated_at)
  SELECT ids.id, $1, 'live', 4, 'delivered', t.dispatch_date, t.postal_code, t.country_code, t.locale, 'la-poste',
         'TRK' || lpad(ids.g::text, 12, '0'), 'REF-' || ids.id::text, t.registration::jsonb, t.window_min, t.window_max,
         t.confidence_level, replace(t.record, '${PLACEHOLDER_ID}', ids.id::text)::json,
         now() - $5 * interval '1 millisecond' - interval '4 days', now() - $5 * interval '1 millisecond'
    FROM ids JOIN t ON t.i = ids.g % $6::int
  RETURNING id, record::text AS record, postal_code, country_code, dispatch_date
), c AS (
  INSERT INTO carrier_events (dispatch_id, dedupe_key, event_id, status, occurred_at, location, received_at, effect)
  SELECT d.id, 'evt:scan-' || n, 'scan-' || n, ($7::text[])[n], d.dispatch_date + n * interval '1 day',
         'SORTING CENTRE ' || n || ' ' || d.postal_code, now() - $5 * interval '1 millisecond' - (3 - n) * interval '1 hour', 'applied'
    FROM d, generate_series(1, 3) AS n
), p AS (
  INSERT INTO prediction_log (dispatch_id, version, computed_at, status, window_min, window_max, confidence_level)
  SELECT d.id, n, d.dispatch_date + n * interval '1 day', 'in_transit', current_date, current_date + 3, 'High'
    FROM d, generate_series(1, 4) AS n
), e AS (
  INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body, created_at)
  SELECT 'evt_' || replace(d.id::text, '-', '') || n, d.id, $1, 'live', ($8::text[])[n], d.dispatch_date + n * interval '1 day',
         convert_to('{"id":"evt_' || replace(d.id::text, '-', '') || n || '","event":"' || ($8::text[])[n] || '","data":' || d.record || '}', 'UTF8'),
         now() - $5 * interval '1 millisecond' - (4 - n) * interval '1 hour'
    FROM d, generate_series(1, 4) AS n
  RETURNING id, created_at
), w AS (
  INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, last_attempt_at, created_at)
  SELECT e.id, $2, 'delivered', 1, e.created_at, e.created_at FROM e
), a AS (
  INSERT INTO delivery_attempts (event_id, endpoint_id, attempt, started_at, duration_ms, status_code, response_head, state_after, request_headers)
  SELECT e.id, $2, 1, e.created_at, 42, 200, convert_to('{"received":true}', 'UTF8'), 'delivered',
         jsonb_build_object('content-type', 'application/json', 'user-agent', 'card-delivery-status-service',
           'x-service-event-id', e.id, 'x-service-attempt', '1', 'x-service-timestamp', extract(epoch FROM e.created_at)::bigint::text,
           'x-service-signature', encode(sha256(convert_to(e.id, 'UTF8')), 'hex'), 'webhook-id', e.id,
           'webhook-signature', 'v1,' || encode(sha256(convert_to(e.id || 'x', 'UTF8')), 'base64'))
    FROM e
), l AS (
  INSERT INTO tracking_links (id, dispatch_id, issuer_id, mode, token_hash, expires_at, created_at)
  SELECT 'tl_' || replace(d.id::text, '-', ''), d.id, $1, 'live', sha256(convert_to(d.id::text || $9, 'UTF8')),
         now() + interval '60 days', d.dispatch_date
    FROM d
  RETURNING id
), gp AS (
  INSERT INTO tracking_gate_passes (pass_hash, link_id, expires_at)
  SELECT sha256(convert_to(l.id || $9 || 'pass', 'UTF8')), l.id, now() + interval '1 day' FROM l
)
INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source, dispatch_id, issuer_id)
SELECT d.postal_code, d.country_code, left(d.postal_code, 2), d.dispatch_date::date, d.dispatch_date::date + 3, 3, 'service', d.id, $1
  FROM d
RETURNING dispatch_id::text AS id`;

/**
 * Inserts `count` completed dispatches of the issuer, last changed `lastChangeAgoMs` ago, their webhook
 * deliveries to `endpointId`; in statements of at most 5,000 dispatches. Returns their ids.
 */
export async function seedCompletedDispatches(
  pool: Pool,
  options: { issuerId: string; endpointId: string; count: number; lastChangeAgoMs: number },
): Promise<string[]> {
  const templates = buildTemplates().filter((t) => t.status === 'delivered');
  const indexed = templates.map((t, i) => ({ ...t, i }));
  const salt = randomBytes(8).toString('hex');
  const ids: string[] = [];
  for (let done = 0; done < options.count; done += 5000) {
    const n = Math.min(5000, options.count - done);
    const { rows } = await pool.query<{ id: string }>(INSERT, [
      options.issuerId,
      options.endpointId,
      n,
      JSON.stringify(indexed),
      options.lastChangeAgoMs,
      indexed.length,
      CARRIER_STATUSES,
      EVENT_TYPES,
      `${salt}-${done}`,
    ]);
    ids.push(...rows.map((r) => r.id));
  }
  return ids;
}
