// db/migrations/1732600000000_prediction_outcomes.sql, its backfill (docs/prediction-quality.md
// "Quality"): every dispatch delivered before the migration gets the outcome the published accuracy
// counts, with the window logged at its registration, learned when the transit history holds its
// row, otherwise with the reasons the history's rules give. The statement is read from the migration
// file and run, limited to one new issuer, on dispatches written as the service wrote them.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { requireTestEnv } from '../support/env.js';

const MIGRATION = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../db/migrations/1732600000000_prediction_outcomes.sql');

/** The migration's INSERT INTO prediction_outcomes (its Up part), limited to one issuer's dispatches. */
function backfill(): string {
  const up = readFileSync(MIGRATION, 'utf8').split('-- Down Migration')[0];
  const statement = /INSERT INTO prediction_outcomes[\s\S]*?;/.exec(up)?.[0];
  if (!statement) throw new Error('no INSERT INTO prediction_outcomes in the migration');
  return `${statement.slice(0, -1)} AND d.issuer_id = $1`;
}

let pool: Pool;

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-outcomes-migration' });
});

afterAll(async () => {
  await pool?.end();
});

interface Past {
  mode?: 'live' | 'test';
  status?: string;
  /** Days between the dispatch date (2026-10-01) and its registration. */
  registeredAfterDays?: number;
  /** Delivered on (2026-10-01 + this many days), its event received this many days later. */
  deliveredAfterDays?: number;
  reportedAfterDays?: number;
  logged?: boolean;
  inHistory?: boolean;
}

/** A dispatch as the service wrote it before the migration: projection, prediction log, carrier event, history row. */
async function pastDispatch(issuerId: string, past: Past): Promise<void> {
  const { mode = 'live', status = 'delivered', registeredAfterDays = 0, deliveredAfterDays = 3, reportedAfterDays = 0 } = past;
  const id = randomUUID();
  const delivered = `(date '2026-10-01' + ${deliveredAfterDays})`;
  await pool.query(
    `INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, registration,
                             window_min, window_max, confidence_level, record, created_at)
     VALUES ($1, $2, $3, 2, $4, '2026-10-01T09:00:00Z', '10115', 'DE', '{}',
             CASE WHEN $4 = 'delivered' THEN ${delivered} ELSE date '2026-10-03' END,
             CASE WHEN $4 = 'delivered' THEN ${delivered} ELSE date '2026-10-06' END, 'High', '{}',
             timestamptz '2026-10-01T09:00:00Z' + $5 * interval '1 day')`,
    [id, issuerId, mode, status, registeredAfterDays],
  );
  if (past.logged !== false) {
    await pool.query(
      `INSERT INTO prediction_log (dispatch_id, version, status, window_min, window_max, confidence_level)
       VALUES ($1, 1, 'dispatched', '2026-10-03', '2026-10-06', 'Medium')`,
      [id],
    );
  }
  if (status !== 'delivered') return;
  await pool.query(
    `INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at, received_at)
     VALUES ($1, 'id:1', 'delivered', ${delivered} + time '10:00', ${delivered} + time '10:00' + $2 * interval '1 day')`,
    [id, reportedAfterDays],
  );
  if (past.inHistory) {
    await pool.query(
      `INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source, dispatch_id, issuer_id)
       VALUES ('10115', 'DE', '10', '2026-10-01', ${delivered}, 2, 'service', $1, $2)`,
      [id, issuerId],
    );
  }
}

describe('the prediction outcomes migration', () => {
  it('keeps an outcome for every dispatch delivered before it, with its registration window and why the model did not learn from it', async () => {
    const issuerId = (await createIssuer(pool, 'Outcomes Migration Issuer')).id;
    await pastDispatch(issuerId, { inHistory: true });
    await pastDispatch(issuerId, { registeredAfterDays: 10, deliveredAfterDays: 4 });
    await pastDispatch(issuerId, { registeredAfterDays: 10, deliveredAfterDays: 5, reportedAfterDays: 6 });
    await pastDispatch(issuerId, { deliveredAfterDays: -1, registeredAfterDays: 0 });
    await pastDispatch(issuerId, { deliveredAfterDays: 40 });
    await pastDispatch(issuerId, { mode: 'test' });
    // Not delivered, and delivered without a window logged at registration: no outcome.
    await pastDispatch(issuerId, { status: 'in_transit' });
    await pastDispatch(issuerId, { logged: false });

    await pool.query(backfill(), [issuerId]);

    const { rows } = await pool.query(
      `SELECT mode, country_code, dispatch_date, confidence_level, window_min, window_max, delivered_date, learned, not_learned_reasons
         FROM prediction_outcomes WHERE issuer_id = $1 ORDER BY delivered_date, mode`,
      [issuerId],
    );
    const registration = { country_code: 'DE', dispatch_date: '2026-10-01', confidence_level: 'Medium', window_min: '2026-10-03', window_max: '2026-10-06' }; // prettier-ignore
    expect(rows).toEqual([
      { ...registration, mode: 'live', delivered_date: '2026-09-30', learned: false, not_learned_reasons: ['delivered_before_dispatch'] },
      { ...registration, mode: 'live', delivered_date: '2026-10-04', learned: true, not_learned_reasons: [] },
      { ...registration, mode: 'test', delivered_date: '2026-10-04', learned: false, not_learned_reasons: [] },
      { ...registration, mode: 'live', delivered_date: '2026-10-05', learned: false, not_learned_reasons: ['late_registration'] },
      { ...registration, mode: 'live', delivered_date: '2026-10-06', learned: false, not_learned_reasons: ['late_registration', 'late_report'] }, // prettier-ignore
      // Prompt and after its dispatch, yet not in the history: the country's bound refused it.
      { ...registration, mode: 'live', delivered_date: '2026-11-10', learned: false, not_learned_reasons: ['implausible'] },
    ]);
  });
});
