// The worker's cache of area levels and delays (db/area-statistics-cache.ts) against the real test
// Postgres and its LISTEN/NOTIFY: while it listens, a destination's areas are read once and then
// served from memory; a condition set or cleared for its country, a service delivery's notice or a
// history import makes the next prediction read afresh, another country's change does not; not
// listening, it reads every time. Each test uses its own countries (Gibraltar, the Vatican, the
// Isle of Man, Jersey, Guernsey: no other test file uses them), so rows never leak between files.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AreaStatisticsCache, notifyTransitStatisticsChanged } from '../../db/area-statistics-cache.js';
import { clearCarrierConditions, setCarrierCondition } from '../../db/conditions.js';
import { createPool, type Pool } from '../../db/pool.js';
import { copyTransitHistory } from '../../db/transit-history.js';
import { destinationKey, loadTransitStatisticsFor } from '../../db/transit-statistics.js';
import { requireTestEnv } from '../support/env.js';
import { asOfDates } from '../support/today.js';
import { until } from '../support/until.js';

let pool: Pool;
/** The same pool, counting the statements the cache sends through it. */
let counted: Pool;
let statements = 0;
const caches: AreaStatisticsCache[] = [];
/** The day the statistics are read as of (test/support/today.ts): a fixed day, never the wall clock's. */
const today = asOfDates()[0];

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 4, applicationName: 'test-area-statistics-cache' });
  counted = new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return (...args: unknown[]) => {
        statements += 1;
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
});

afterAll(async () => {
  for (const cache of caches) await cache.stop();
  await pool?.end();
});

async function listening(): Promise<AreaStatisticsCache> {
  const cache = new AreaStatisticsCache(counted, requireTestEnv('TEST_DATABASE_URL'));
  caches.push(cache);
  await cache.start();
  expect(cache.isListening).toBe(true);
  return cache;
}

/** The delays in force for a destination, as a prediction reads them through `cache`; counts statements. */
async function delaysThrough(cache: AreaStatisticsCache, countryCode: string, postalCode = '10115'): Promise<number[]> {
  const destination = { countryCode, postalCode };
  const read = await loadTransitStatisticsFor(counted, [destination], today, async (list) => new Map(list.map((c) => [c, { country: emptyCountry(), areaMoments: undefined }])) as never, cache.source); // prettier-ignore
  return read.get(destinationKey(destination))!.operatorDelays.map((d) => d.delayDays);
}

const emptyCountry = () => ({}) as never;

describe('the area statistics cache', () => {
  it('reads a destination once while it listens', async () => {
    const cache = await listening();
    statements = 0;
    await delaysThrough(cache, 'GI');
    await delaysThrough(cache, 'GI');
    await delaysThrough(cache, 'GI');
    expect(statements).toBe(1);
  });

  it('reads afresh after a condition is set or cleared for the country, not for another country', async () => {
    const cache = await listening();
    expect(await delaysThrough(cache, 'VA')).toEqual([]);
    await setCarrierCondition(pool, { countryCode: 'IM', postalPrefix: null, delayDays: 1, until: null });
    await new Promise((resolve) => setTimeout(resolve, 200));
    statements = 0;
    expect(await delaysThrough(cache, 'VA')).toEqual([]);
    expect(statements).toBe(0);

    await setCarrierCondition(pool, { countryCode: 'VA', postalPrefix: null, delayDays: 2, until: null });
    await until(async () => ((await delaysThrough(cache, 'VA')).length === 1 ? true : undefined), 'the new condition to be read');
    expect(await delaysThrough(cache, 'VA')).toEqual([2]);
    await clearCarrierConditions(pool, { countryCode: 'VA' });
    await until(async () => ((await delaysThrough(cache, 'VA')).length === 0 ? true : undefined), 'the cleared condition to be read');
  });

  it('reads afresh after a service delivery is announced for the country, or a history import', async () => {
    const cache = await listening();
    await delaysThrough(cache, 'JE');
    await notifyTransitStatisticsChanged(pool, 'JE');
    await until(async () => {
      statements = 0;
      await delaysThrough(cache, 'JE');
      return statements === 1 ? true : undefined;
    }, 'a fresh read after the notice');
    await copyTransitHistory(
      pool,
      (async function* () {
        yield { postalCode: '10115', countryCode: 'JE', dispatchDate: '2026-10-01', deliveredDate: '2026-10-05', businessDays: 4 };
      })(),
    );
    await until(async () => {
      statements = 0;
      await delaysThrough(cache, 'JE');
      return statements === 1 ? true : undefined;
    }, 'a fresh read after the import');
  });

  it('reads every time when it is not listening', async () => {
    const cache = new AreaStatisticsCache(counted, requireTestEnv('TEST_DATABASE_URL'));
    statements = 0;
    await delaysThrough(cache, 'GG');
    await delaysThrough(cache, 'GG');
    expect(statements).toBe(2);
  });
});
