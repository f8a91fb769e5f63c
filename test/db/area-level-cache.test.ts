// The bulk refresh's cache of postal code and prefix levels (db/area-level-cache.ts)
// against the real test Postgres: what it serves equals a read without it, page after page; a level
// it holds is not read again during the run (a delivery recorded since shows at the next run, i.e.
// in a new cache), a level it has not seen is read; operator delays are read on every call. Its own
// countries (Finland, Norway), which no other test file uses for history.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { clearCarrierConditions, setCarrierCondition } from '../../db/conditions.js';
import { createPool, type Pool } from '../../db/pool.js';
import { copyTransitHistory, recordServiceDelivery, type TransitRecord } from '../../db/transit-history.js';
import { AreaLevelCache } from '../../db/area-level-cache.js';
import { loadTransitStatisticsFor } from '../../db/transit-statistics.js';
import { requireTestEnv } from '../support/env.js';
import { asOfDates } from '../support/today.js';

let pool: Pool;
/** The day the statistics are read as of (test/support/today.ts): a fixed day, never the wall clock's. */
const today = asOfDates()[0];

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 4, applicationName: 'test-area-level-cache' });
});

afterAll(async () => {
  await clearCarrierConditions(pool, { countryCode: 'NO' });
  await pool?.end();
});

/** `count` deliveries to the code, one every 3 days from 45 days ago back (older than RECENT_DAYS), each `businessDays` long. */
async function deliveries(countryCode: string, postalCode: string, count: number, businessDays: number): Promise<void> {
  const rows: TransitRecord[] = [];
  for (let i = 0; i < count; i += 1) {
    const dispatched = new Date(Date.parse(`${today}T00:00:00Z`) - (45 + 3 * i) * 86_400_000);
    rows.push({
      postalCode,
      countryCode,
      dispatchDate: dispatched.toISOString().slice(0, 10),
      deliveredDate: new Date(dispatched.getTime() + (businessDays + 4) * 86_400_000).toISOString().slice(0, 10),
      businessDays,
    });
  }
  await copyTransitHistory(
    pool,
    (async function* () {
      yield* rows;
    })(),
  );
}

const codeDeliveries = (s: { postalCode: { fit: readonly number[]; calibration: readonly number[] } }) =>
  [...s.postalCode.fit, ...s.postalCode.calibration].reduce((a, b) => a + b, 0);

describe('area level cache of a refresh run', () => {
  it('serves, page after page, statistics identical to reads without it', async () => {
    await deliveries('FI', '00100', 60, 2);
    await deliveries('FI', '00150', 30, 3);
    await deliveries('FI', '33100', 45, 4);
    const cache = new AreaLevelCache(pool);
    // Pages sharing prefixes and codes, as pages of dispatches in id order do.
    const pages = [
      ['00100', '33100'],
      ['00150', '00100', '99999'],
      ['33100', '00150', '33999'],
    ].map((codes) => codes.map((postalCode) => ({ countryCode: 'FI', postalCode })));
    for (const page of pages) {
      const served = await loadTransitStatisticsFor(pool, page, today, undefined, cache.source);
      expect(served).toEqual(await loadTransitStatisticsFor(pool, page, today));
    }
    // Codes 00100, 00150, 33100, 99999, 33999 and prefixes 00, 33, 99: each held once.
    expect(cache.size).toBe(8);
  });

  it('holds a level it has read for the rest of the run, and reads a level it has not seen', async () => {
    await deliveries('FI', '40100', 20, 2);
    const cache = new AreaLevelCache(pool);
    const held = { countryCode: 'FI', postalCode: '40100' };
    expect(codeDeliveries((await loadTransitStatisticsFor(pool, [held], today, undefined, cache.source)).get('FI 40100')!)).toBe(20);

    const dispatched = new Date(Date.parse(`${today}T00:00:00Z`) - 60 * 86_400_000);
    const delivery = (postalCode: string) =>
      recordServiceDelivery(
        pool,
        randomUUID(),
        {
          postalCode,
          countryCode: 'FI',
          dispatchDate: dispatched.toISOString().slice(0, 10),
          deliveredDate: new Date(dispatched.getTime() + 2 * 86_400_000).toISOString().slice(0, 10),
          businessDays: 2,
        },
        today,
      );
    await delivery('40100');
    await delivery('40200');
    const unseen = { countryCode: 'FI', postalCode: '40200' };
    const page = await loadTransitStatisticsFor(pool, [held, unseen], today, undefined, cache.source);
    expect(codeDeliveries(page.get('FI 40100')!)).toBe(20);
    expect(codeDeliveries(page.get('FI 40200')!)).toBe(1);
    // The next run (a new cache) reads the delivery.
    const next = await loadTransitStatisticsFor(pool, [held], today, undefined, new AreaLevelCache(pool).source);
    expect(codeDeliveries(next.get('FI 40100')!)).toBe(21);
  });

  it('reads operator delays on every call, so a condition set during the run applies to the next page', async () => {
    await deliveries('NO', '0150', 20, 2);
    const cache = new AreaLevelCache(pool);
    const destination = [{ countryCode: 'NO', postalCode: '0150' }];
    expect((await loadTransitStatisticsFor(pool, destination, today, undefined, cache.source)).get('NO 0150')!.operatorDelays).toEqual([]);
    await setCarrierCondition(pool, { countryCode: 'NO', postalPrefix: '01', delayDays: 2, until: null });
    const after = await loadTransitStatisticsFor(pool, destination, today, undefined, cache.source);
    expect(after.get('NO 0150')!.operatorDelays).toEqual([{ postalPrefix: '01', delayDays: 2, until: null }]);
  });
});
