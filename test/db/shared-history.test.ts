// docs/predictions.md "History and its bounds", against the real test Postgres: the
// service's own deliveries join the transit history only within plausibility bounds and with the
// issuer of their dispatch (db/transit-history.ts recordServiceDelivery), and no issuer weighs more than
// every other source of an area's recent history together, so one issuer recording many slow
// deliveries cannot move everybody's window (db/transit-statistics.ts). Each test uses its own
// country, which no other test file uses.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { copyTransitHistory, recordServiceDelivery, type TransitRecord } from '../../db/transit-history.js';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { upsertProjection, type ProjectionRow } from '../../db/dispatches.js';
import { loadTransitStatistics } from '../../db/transit-statistics.js';
import { predictFromHistory, slowdownDays } from '../../domain/prediction-model.js';
import { requireTestEnv } from '../support/env.js';

let pool: Pool;
const DAY = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const daysAgo = (days: number) => new Date(Date.parse(`${today}T00:00:00Z`) - days * DAY).toISOString().slice(0, 10);

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-shared-history' });
});

afterAll(async () => {
  await pool?.end();
});

/** A delivery to `postalCode` dispatched `ago` days ago, `businessDays` long (delivered as many calendar days later). */
function delivery(countryCode: string, postalCode: string, ago: number, businessDays: number): TransitRecord {
  return { countryCode, postalCode, dispatchDate: daysAgo(ago), deliveredDate: daysAgo(Math.max(0, ago - businessDays)), businessDays };
}

async function importRows(rows: TransitRecord[]): Promise<void> {
  await copyTransitHistory(
    pool,
    (async function* () {
      yield* rows;
    })(),
  );
}

/** A live dispatch of the issuer, as its first projection writes it: what recordServiceDelivery reads the issuer from. */
async function dispatchOf(issuerId: string, row: TransitRecord): Promise<string> {
  const id = randomUUID();
  const projection: ProjectionRow = {
    id,
    issuerId,
    mode: 'live',
    version: 1,
    status: 'dispatched',
    dispatchDate: `${row.dispatchDate}T09:00:00Z`,
    postalCode: row.postalCode,
    countryCode: row.countryCode,
    registration: '{}',
    windowMin: row.deliveredDate,
    windowMax: row.deliveredDate,
    confidenceLevel: 'Low',
    record: {} as ProjectionRow['record'],
  };
  await upsertProjection(pool, projection);
  return id;
}

/** The issuer's dispatch delivered as `row` says; whether it joined the history. */
async function deliveredBy(issuerId: string, row: TransitRecord): Promise<boolean> {
  return recordServiceDelivery(pool, await dispatchOf(issuerId, row), row);
}

const newIssuer = async () => (await createIssuer(pool, 'History Issuer')).id;

describe('a live delivery joining the shared history', () => {
  it('keeps the issuer of its dispatch, once however often it is recorded', async () => {
    const issuerId = await newIssuer();
    const row = delivery('KE', '00100', 10, 3);
    const id = await dispatchOf(issuerId, row);
    expect(await recordServiceDelivery(pool, id, row)).toBe(true);
    expect(await recordServiceDelivery(pool, id, row)).toBe(false);
    const { rows } = await pool.query('SELECT issuer_id, source, business_days FROM transit_history WHERE dispatch_id = $1', [id]);
    expect(rows).toEqual([{ issuer_id: issuerId, source: 'service', business_days: 3 }]);
  });

  it('is refused when delivered before its dispatch date, instead of failing the projection', async () => {
    const row = { ...delivery('KE', '00100', 10, 0), deliveredDate: daysAgo(11) };
    expect(await deliveredBy(await newIssuer(), row)).toBe(false);
  });

  it('is refused beyond three times the 99th percentile transit of the country', async () => {
    // 100 imported deliveries of 2–4 business days: p99 = 4, so at most 12.
    await importRows(Array.from({ length: 100 }, (_, i) => delivery('GR', '10431', 40 + i, 2 + (i % 3))));
    const issuerId = await newIssuer();
    expect(await deliveredBy(issuerId, delivery('GR', '10431', 20, 12))).toBe(true);
    expect(await deliveredBy(issuerId, delivery('GR', '10431', 20, 13))).toBe(false);
    const { rows } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM transit_history WHERE country_code = 'GR' AND business_days = 13",
    );
    expect(rows[0].n).toBe(0);
  });

  it('does not let an issuer raise its own bound with its own slow deliveries', async () => {
    await importRows(Array.from({ length: 100 }, (_, i) => delivery('UY', '11000', 40 + i, 2 + (i % 3))));
    const issuerId = await newIssuer();
    // 300 deliveries of 12 days, all within the bound: counted with them, the p99 would be 12.
    for (let i = 0; i < 300; i += 1) expect(await deliveredBy(issuerId, delivery('UY', '11000', 20, 12))).toBe(true);
    expect(await deliveredBy(issuerId, delivery('UY', '11000', 20, 13))).toBe(false);
    // Another issuer's bound does count them.
    expect(await deliveredBy(await newIssuer(), delivery('UY', '11000', 20, 13))).toBe(true);
  }, 60_000);

  it('is refused beyond 30 business days in a country with too little history to say what is normal', async () => {
    const issuerId = await newIssuer();
    expect(await deliveredBy(issuerId, delivery('HU', '1011', 50, 30))).toBe(true);
    expect(await deliveredBy(issuerId, delivery('HU', '1011', 50, 31))).toBe(false);
  });
});

describe('an issuer’s weight in an area’s recent history', () => {
  /** Two years of 3-day deliveries to the code, the last 10 of them recent: a norm of 3. */
  const steadyHistory = (countryCode: string, postalCode: string) =>
    importRows([
      ...Array.from({ length: 100 }, (_, i) => delivery(countryCode, postalCode, 40 + i * 5, 3)),
      ...Array.from({ length: 10 }, (_, i) => delivery(countryCode, postalCode, 8 + i, 3)),
    ]);

  it('is at most that of every other source together: one issuer’s 40 slow deliveries do not move the window', async () => {
    await steadyHistory('BG', '1000');
    const query = { countryCode: 'BG', postalCode: '1000', today };
    const input = {
      dispatchDate: `${today}T09:00:00Z`,
      destination: { postal_code: '1000', country_code: 'BG' },
      state: { status: 'dispatched' as const, statusSince: `${today}T09:00:00Z` },
      today,
    };
    const before = predictFromHistory(input, await loadTransitStatistics(pool, query));
    // 9 business days, three times the norm: each one plausible, together an attempt to shift the area.
    const attacker = await newIssuer();
    for (let i = 0; i < 40; i += 1) expect(await deliveredBy(attacker, delivery('BG', '1000', 12 + (i % 5), 9))).toBe(true);
    const after = await loadTransitStatistics(pool, query);
    for (const level of [after.postalCode, after.postalPrefix, after.country]) expect(level.recent.count).toBe(10 + 10);
    expect(slowdownDays(after)).toBe(0);
    expect(predictFromHistory(input, after)).toEqual(before);
  }, 60_000);

  it('still lets several issuers’ slow deliveries show a real slowdown', async () => {
    await steadyHistory('RO', '010011');
    const [first, second] = [await newIssuer(), await newIssuer()];
    for (let i = 0; i < 20; i += 1) {
      expect(await deliveredBy(first, delivery('RO', '010011', 10 + (i % 5), 6))).toBe(true);
      expect(await deliveredBy(second, delivery('RO', '010011', 10 + (i % 5), 6))).toBe(true);
    }
    const stats = await loadTransitStatistics(pool, { countryCode: 'RO', postalCode: '010011', today });
    expect(stats.postalCode.recent.count).toBe(50);
    expect(slowdownDays(stats)).toBe(3);
  }, 60_000);
});
