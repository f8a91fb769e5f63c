// The service's own registrations still on their way, as the area statement reads them
// (db/transit-statistics-sql.ts IN_FLIGHT; docs/recent-shifts.md, issue 29):
// which dispatches count (live, registered promptly, not delivered, of the recent period, before
// today), at which level (the postal code and prefix as the history stores them), each issuer's
// bounded by the other sources (docs/predictions.md "History and its bounds"), and that one
// issuer's cards on their way, however many, never read as a shift where the import shows none.
// Against the real test Postgres, in Lithuania, which no other test file uses; as of the test's
// today (test/support/today.ts), at noon: every row's created_at is set from it, never from now().
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import type { TransitRecord } from '../../db/transit-history.js';
import { loadTransitStatistics } from '../../db/transit-statistics.js';
import { AREA_SQL } from '../../db/transit-statistics-sql.js';
import { addBusinessDays, businessDayOnOrAfter } from '../../domain/calendar.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import { destination } from '../../domain/field-schemas.js';
import { levelPredictives, type TransitStatistics } from '../../domain/prediction-model.js';
import { recentChange } from '../../domain/recent-change.js';
import { requireTestEnv } from '../support/env.js';
import { insertHistory } from '../support/history-rows.js';
import { upsertProjection } from '../support/projection.js';
import { asOfDates, daysBefore } from '../support/today.js';

const COUNTRY = 'LT';
const CODE = '01100';
const today = asOfDates()[0];
/** The moment the tests' registrations are made. */
const NOW = `${today}T12:00:00Z`;
let pool: Pool;

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-in-flight' });
});

beforeEach(async () => {
  await pool.query('DELETE FROM transit_history WHERE country_code = $1', [COUNTRY]);
  await pool.query('DELETE FROM dispatches WHERE country_code = $1', [COUNTRY]);
});

afterAll(async () => {
  await pool?.end();
});

/** A dispatch of `ago` days ago to `postalCode`, registered NOW (prompt when `ago` ≤ 2), in `status`. */
async function register(
  issuerId: string,
  ago: number,
  { postalCode = CODE, status = 'in_transit', mode = 'live' as 'live' | 'test' } = {},
) {
  const dispatchDate = `${daysBefore(today, ago)}T10:00:00Z`;
  const record = { status } as unknown as StatusRecord;
  const id = randomUUID();
  await upsertProjection(pool, {
    id,
    issuerId,
    mode,
    version: 1,
    status,
    dispatchDate,
    postalCode,
    countryCode: COUNTRY,
    registration: '{}',
    windowMin: today,
    windowMax: today,
    confidenceLevel: 'Low',
    record,
  });
  await pool.query('UPDATE dispatches SET created_at = $2 WHERE id = $1', [id, NOW]);
}

/** Created `ago` days ago: what a registration made at dispatch `ago` days ago looks like. */
async function backdateRegistrations(ago: number) {
  await pool.query(`UPDATE dispatches SET created_at = dispatch_date + interval '5 minutes' WHERE country_code = $1 AND dispatch_date < $3::timestamptz - $2 * interval '1 day'`, [COUNTRY, ago, NOW]); // prettier-ignore
}

/** An imported delivery to the code dispatched `ago` days ago, `transit` business days later, if delivered before today. */
function imported(ago: number, transit: number, postalCode = CODE): TransitRecord | null {
  const dispatchDate = daysBefore(today, ago);
  const deliveredDate = addBusinessDays(businessDayOnOrAfter(dispatchDate, COUNTRY), transit, COUNTRY);
  return deliveredDate < today ? { countryCode: COUNTRY, postalCode, dispatchDate, deliveredDate, businessDays: transit } : null;
}

const inFlightOf = (stats: TransitStatistics, level: 'postalCode' | 'postalPrefix') => stats[level].inFlight ?? [];
const count = (rows: ReadonlyArray<readonly [number, number]>) => rows.reduce((n, [, c]) => n + c, 0);

describe('the service’s registrations on their way', () => {
  it('count the live, prompt, undelivered dispatches of the recent period at their code and prefix, by days since dispatch', async () => {
    const issuer = (await createIssuer(pool, 'In-flight issuer')).id;
    await insertHistory(
      pool,
      Array.from({ length: 30 }, (_, i) => imported(8 + i, 2)).filter((r): r is TransitRecord => r !== null),
    );
    await register(issuer, 2);
    await register(issuer, 2, { postalCode: '011 00' }); // the same code as the history stores it
    await register(issuer, 5, { postalCode: '01999' }); // another code of the prefix
    await register(issuer, 3, { status: 'delivered' });
    await register(issuer, 3, { mode: 'test' });
    await register(issuer, 0); // dispatched today: nothing to tell yet
    await register(issuer, 60); // before the recent period
    await backdateRegistrations(1);
    await register(issuer, 10); // registered now, ten days after its dispatch: not prompt
    const stats = await loadTransitStatistics(pool, { countryCode: COUNTRY, postalCode: CODE, today });
    expect(inFlightOf(stats, 'postalCode')).toEqual([[2, 2]]);
    expect(inFlightOf(stats, 'postalPrefix')).toEqual([
      [2, 2],
      [5, 1],
    ]);
    expect(stats.country.inFlight).toBeUndefined();
  });

  it('count a registration under the code and prefix its prediction reads, whatever alphabet its postal code is in', async () => {
    // The API takes any string for a postal code (the spec sets no alphabet); the history and the
    // predictions key it by domain/prediction-model.ts normalisePostalCode and postalPrefixOf, in
    // which "ß" is upper-cased to "SS" and a character outside the BMP is one of the prefix's two
    // (it was half of one, a lone surrogate, which Postgres stores as U+FFFD). The in-flight lookup once made the keys again in SQL, and missed these (found
    // by the property below).
    const issuer = (await createIssuer(pool, 'Any alphabet')).id;
    // Imported recent deliveries of the areas, which an issuer's registrations may match in number.
    await insertHistory(pool, [imported(20, 2, 'ß1')!, imported(21, 2, '\u{10000}19')!]);
    await register(issuer, 2, { postalCode: 'ß-1' });
    await register(issuer, 3, { postalCode: '\u{10000}12' });
    await backdateRegistrations(1);
    const sharp = await loadTransitStatistics(pool, { countryCode: COUNTRY, postalCode: 'ß1', today });
    expect(inFlightOf(sharp, 'postalCode')).toEqual([[2, 1]]);
    expect(inFlightOf(sharp, 'postalPrefix')).toEqual([[2, 1]]);
    const astral = await loadTransitStatistics(pool, { countryCode: COUNTRY, postalCode: '\u{10000}19', today });
    expect(inFlightOf(astral, 'postalPrefix')).toEqual([[3, 1]]);
  });

  it('count a registration under its prediction’s code and prefix for any postal code the API takes', async () => {
    const issuer = (await createIssuer(pool, 'Any string')).id;
    // Any postal code the API takes (domain/field-schemas.ts destination: 1–16 characters, no control
    // characters, trimmed): what issuers send, and any other text.
    const accepted = (text: string) => destination.shape.postal_code.safeParse(text);
    const postalCode = fc
      .oneof(
        fc.stringMatching(/^[0-9A-Za-z -]{1,12}$/),
        fc.string({ maxLength: 16, unit: 'grapheme' }),
        fc.string({ maxLength: 16, unit: 'binary' }),
      ) // prettier-ignore
      .filter((text) => accepted(text).success)
      .map((text) => accepted(text).data!);
    await fc.assert(
      fc.asyncProperty(postalCode, async (code) => {
        await pool.query('DELETE FROM transit_history WHERE country_code = $1', [COUNTRY]);
        await pool.query('DELETE FROM dispatches WHERE country_code = $1', [COUNTRY]);
        await insertHistory(pool, [imported(20, 2, code)!]);
        await register(issuer, 2, { postalCode: code });
        await backdateRegistrations(1);
        const stats = await loadTransitStatistics(pool, { countryCode: COUNTRY, postalCode: code, today });
        expect([inFlightOf(stats, 'postalCode'), inFlightOf(stats, 'postalPrefix')]).toEqual([[[2, 1]], [[2, 1]]]);
      }),
      { numRuns: 60 },
    );
  });

  it('count an issuer’s for at most the other sources’ recent deliveries, less its own', async () => {
    const issuer = (await createIssuer(pool, 'Busy issuer')).id;
    // 4 imported recent deliveries, and the issuer's own 1.
    await insertHistory(pool, [imported(20, 2), imported(21, 2), imported(22, 2), imported(23, 2)].filter((r): r is TransitRecord => r !== null)); // prettier-ignore
    await insertHistory(pool, [imported(24, 2)!], issuer);
    for (let i = 0; i < 10; i += 1) await register(issuer, 2);
    await backdateRegistrations(1);
    const stats = await loadTransitStatistics(pool, { countryCode: COUNTRY, postalCode: CODE, today });
    expect(count(inFlightOf(stats, 'postalCode'))).toBe(4 - 1);
  });

  it('never make one issuer’s cards on their way, however many, read as a shift where the import shows none', async () => {
    const issuer = (await createIssuer(pool, 'Patient attacker')).id;
    // A 2-day norm, and three imported deliveries a day of the recent period that follow it.
    const rows = [
      ...Array.from({ length: 300 }, (_, i) => imported(45 + Math.floor(i / 3), 2)),
      ...Array.from({ length: 3 * 40 }, (_, i) => imported(1 + Math.floor(i / 3), 2)),
    ];
    await insertHistory(
      pool,
      rows.filter((r): r is TransitRecord => r !== null),
    );
    for (let ago = 4; ago <= 12; ago += 1) for (let i = 0; i < 10; i += 1) await register(issuer, ago);
    await backdateRegistrations(1);
    const stats = await loadTransitStatistics(pool, { countryCode: COUNTRY, postalCode: CODE, today });
    expect(count(inFlightOf(stats, 'postalCode'))).toBeGreaterThan(0);
    const p = levelPredictives(stats);
    expect(recentChange(stats, { postalCode: p.code, postalPrefix: p.prefix, country: p.country }, today, COUNTRY).shift).toBeNull();
  });

  it('are read through the in-flight indexes, by code and by prefix, not by scanning the country', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // The tables are small here: without this the planner scans them whatever the indexes.
      await client.query('SET LOCAL enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${AREA_SQL}`, [
        [COUNTRY],
        [CODE],
        [COUNTRY],
        ['01'],
        today,
        [COUNTRY],
      ]);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toContain('dispatches_in_flight_code_idx');
      expect(plan).toContain('dispatches_in_flight_prefix_idx');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
