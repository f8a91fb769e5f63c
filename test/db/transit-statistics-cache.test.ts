// The per-process cache of country statistics (db/country-statistics-cache.ts) against the real test
// Postgres: what it serves equals a read of db/transit-statistics.ts without it; the postal code
// level and carrier conditions are always read fresh; the country level is read again in the
// background once its TTL has passed (the expired entry serving meanwhile), and the caller waits for
// a fresh read past the staleness bound or when it asks for statistics loaded after a given time, as
// a projection write the prediction refresh asked for does. Each test uses its own country (Baltic,
// Balkan and Caucasian ones no other test file uses), so rows never leak between them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createProjectionActivities, type ChangeInput, type ChangeResult } from '../../activities/projection.js';
import { clearCarrierConditions, setCarrierCondition } from '../../db/conditions.js';
import { COUNTRY_STATISTICS_TTL_MS, CountryStatisticsCache, MAX_STALENESS_TTLS } from '../../db/country-statistics-cache.js';
import { copyTransitHistory, recordServiceDelivery, type TransitRecord } from '../../db/transit-history.js';
import { createPool, type Pool } from '../../db/pool.js';
import { loadTransitStatistics, loadTransitStatisticsFor } from '../../db/transit-statistics.js';
import { predictFromHistory } from '../../domain/prediction-model.js';
import type { Prediction } from '../../domain/prediction.js';
import { initialState } from '../../domain/state-machine.js';
import { requireTestEnv } from '../support/env.js';
import { asOfDates } from '../support/today.js';
import { insertIssuer, registration } from '../support/workflow-env.js';

let pool: Pool;
/** The day the statistics are read as of (test/support/today.ts): a fixed day, never the wall clock's. */
const today = asOfDates()[0];

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 4, applicationName: 'test-statistics-cache' });
});

afterAll(async () => {
  await pool?.end();
});

/** `count` deliveries to the code, one every 3 days from 45 days ago back (older than RECENT_DAYS), each `businessDays` long. */
async function deliveries(countryCode: string, postalCode: string, count: number, businessDays: number): Promise<void> {
  const rows: TransitRecord[] = [];
  for (let i = 0; i < count; i += 1) {
    const dispatched = new Date(Date.parse(`${today}T00:00:00Z`) - (45 + 3 * i) * 86_400_000);
    const delivered = new Date(dispatched.getTime() + (businessDays + 4) * 86_400_000);
    rows.push({
      postalCode,
      countryCode,
      dispatchDate: dispatched.toISOString().slice(0, 10),
      deliveredDate: delivered.toISOString().slice(0, 10),
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

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** A cache whose clock the test moves. */
function cacheWithClock() {
  let now = Date.now();
  const cache = new CountryStatisticsCache(pool, { now: () => new Date(now) });
  return { cache, advance: (ms: number) => (now += ms) };
}

/**
 * A cache that has read the country's 50 deliveries to `postalCode`, after which a 51st was
 * recorded: the cached country level still counts 50, a fresh read 51.
 */
async function cachedCountryWithNewDelivery(countryCode: string, postalCode: string) {
  await deliveries(countryCode, postalCode, 50, 2);
  const { cache, advance } = cacheWithClock();
  const query = { countryCode, postalCode, today };
  await loadTransitStatistics(pool, query, cache.source());
  const dispatched = new Date(Date.parse(`${today}T00:00:00Z`) - 60 * 86_400_000);
  await recordServiceDelivery(
    pool,
    randomUUID(),
    {
      postalCode,
      countryCode,
      dispatchDate: dispatched.toISOString().slice(0, 10),
      deliveredDate: new Date(dispatched.getTime() + 2 * 86_400_000).toISOString().slice(0, 10),
      businessDays: 2,
    },
    today,
  );
  return { cache, advance, query };
}

const totalOf = (h: readonly number[]) => h.reduce((a, b) => a + b, 0);
const countryDeliveries = (s: { country: { fit: readonly number[]; calibration: readonly number[] } }) =>
  totalOf(s.country.fit) + totalOf(s.country.calibration);

describe('country statistics cache', () => {
  it('serves statistics identical to a read without the cache, for every destination', async () => {
    await deliveries('EE', '10111', 60, 2);
    await deliveries('EE', '10222', 30, 3);
    await deliveries('EE', '50333', 45, 4);
    const destinations = ['10111', '10222', '50333', '60999'].map((postalCode) => ({ countryCode: 'EE', postalCode }));
    const { cache } = cacheWithClock();
    const first = await loadTransitStatisticsFor(pool, destinations, today, cache.source());
    const cached = await loadTransitStatisticsFor(pool, destinations, today, cache.source());
    const uncached = await loadTransitStatisticsFor(pool, destinations, today);
    expect(countryDeliveries(uncached.get('EE 10111')!)).toBe(135);
    expect(cached).toEqual(uncached);
    expect(first).toEqual(uncached);
  });

  it('reads a new delivery into the postal code level at once, and into the country level in the background once the TTL has passed', async () => {
    const { cache, advance, query } = await cachedCountryWithNewDelivery('LV', '1001');
    const soon = await loadTransitStatistics(pool, query, cache.source());
    expect(totalOf(soon.postalCode.fit) + totalOf(soon.postalCode.calibration)).toBe(51);
    expect(countryDeliveries(soon)).toBe(50);

    advance(COUNTRY_STATISTICS_TTL_MS);
    // The expired entry still serves this caller, while the country is read again behind it.
    expect(countryDeliveries(await loadTransitStatistics(pool, query, cache.source()))).toBe(50);
    await cache.settled();
    const later = await loadTransitStatistics(pool, query, cache.source());
    expect(countryDeliveries(later)).toBe(51);
    expect(later).toEqual(await loadTransitStatistics(pool, query));
  });

  it('makes a caller wait for a fresh read once the entry is as old as the staleness bound', async () => {
    const { cache, advance, query } = await cachedCountryWithNewDelivery('MD', '2001');
    advance(MAX_STALENESS_TTLS * COUNTRY_STATISTICS_TTL_MS);
    expect(countryDeliveries(await loadTransitStatistics(pool, query, cache.source()))).toBe(51);
  });

  it('makes a caller wait for a fresh read when it asks for statistics newer than an expired entry', async () => {
    const { cache, advance } = await cachedCountryWithNewDelivery('GE', '0105');
    const expired = (await cache.get(['GE'], today)).get('GE')!.loadedAt;
    advance(COUNTRY_STATISTICS_TTL_MS + 1000);
    const asOf = new Date(Date.parse(expired) + 1).toISOString();
    const fresh = (await cache.get(['GE'], today, asOf)).get('GE')!;
    expect(Date.parse(fresh.loadedAt)).toBeGreaterThanOrEqual(Date.parse(asOf));
    expect(countryDeliveries(fresh.statistics)).toBe(51);
  });

  it('serves an expired entry to callers that ask for no newer statistics until the background read has finished', async () => {
    const { cache, advance } = await cachedCountryWithNewDelivery('BA', '71000');
    const expired = (await cache.get(['BA'], today)).get('BA')!.loadedAt;
    advance(COUNTRY_STATISTICS_TTL_MS);
    expect((await cache.get(['BA'], today)).get('BA')!.loadedAt).toBe(expired);
    expect((await cache.get(['BA'], today, expired)).get('BA')!.loadedAt).toBe(expired);
    await cache.settled();
    const reread = (await cache.get(['BA'], today)).get('BA')!;
    expect(Date.parse(reread.loadedAt)).toBeGreaterThan(Date.parse(expired));
    expect(countryDeliveries(reread.statistics)).toBe(51);
  });

  it('serves no entry loaded before the time a caller asks for', async () => {
    await deliveries('LT', '01001', 50, 2);
    const { cache, advance } = cacheWithClock();
    const first = await cache.get(['LT'], today);
    await deliveries('LT', '02002', 10, 5);
    advance(1000);
    const asOf = new Date(Date.parse(first.get('LT')!.loadedAt) + 1).toISOString();
    const fresh = await cache.get(['LT'], today, asOf);
    expect(Date.parse(fresh.get('LT')!.loadedAt)).toBeGreaterThanOrEqual(Date.parse(asOf));
    expect(countryDeliveries(fresh.get('LT')!.statistics)).toBe(60);
    // Without such a time, the same entry serves within its TTL.
    expect((await cache.get(['LT'], today)).get('LT')!.loadedAt).toBe(fresh.get('LT')!.loadedAt);
  });

  it('applies conditions set and cleared on the next read through the cache', async () => {
    await deliveries('MK', '1000', 50, 2);
    const { cache } = cacheWithClock();
    const query = { countryCode: 'MK', postalCode: '1000', today };
    expect((await loadTransitStatistics(pool, query, cache.source())).operatorDelays).toEqual([]);
    await setCarrierCondition(pool, { countryCode: 'MK', postalPrefix: null, delayDays: 2, until: null });
    expect((await loadTransitStatistics(pool, query, cache.source())).operatorDelays).toEqual([{ postalPrefix: null, delayDays: 2, until: null }]); // prettier-ignore
    await clearCarrierConditions(pool, { countryCode: 'MK' });
    expect((await loadTransitStatistics(pool, query, cache.source())).operatorDelays).toEqual([]);
  });

  it('keeps each day apart: an entry read for yesterday does not serve today', async () => {
    await deliveries('ME', '81000', 50, 2);
    const { cache } = cacheWithClock();
    const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    await cache.get(['ME'], yesterday);
    await deliveries('ME', '81000', 5, 2);
    expect(countryDeliveries((await cache.get(['ME'], today)).get('ME')!.statistics)).toBe(55);
    expect(countryDeliveries((await cache.get(['ME'], yesterday)).get('ME')!.statistics)).toBe(50);
  });
});

describe('a projection write the prediction refresh asked for', () => {
  it('reads no older country statistics than the refresh did, so it writes the window the refresh found', async () => {
    // A postal code and prefix with no history: the window comes from the country level alone.
    await deliveries('AL', '1001', 60, 2);
    const issuerId = await insertIssuer(pool);
    const reg = registration(issuerId, {
      dispatchDate: `${today}T08:00:00.000Z`,
      destination: { postal_code: '9001', country_code: 'AL' },
    });
    // The projection's worker read Albania's statistics at registration…
    const projectionCache = new CountryStatisticsCache(pool);
    // On the test's day, as the refresh's prediction below: the write's window starts no earlier than its own today.
    const { projectChange } = createProjectionActivities({ pool, countryStatistics: projectionCache, now: () => new Date(`${today}T12:00:00Z`) }); // prettier-ignore
    const { id, issuerId: issuer, mode, dispatchDate, destination, fingerprint } = reg;
    const state = { status: 'dispatched' as const, statusSince: dispatchDate };
    let shown: Prediction | undefined;
    const run = async (version: number, statisticsAsOf?: string): Promise<{ prediction: Prediction }> => {
      const input: ChangeInput = {
        dispatch: { id, issuerId: issuer, mode, dispatchDate, destination },
        ...(version === 1 ? { registration: { fingerprint } } : { previous: { state, prediction: shown! } }),
        version,
        state,
        effects: [],
        timestamp: new Date().toISOString(),
        ...(statisticsAsOf === undefined ? {} : { statisticsAsOf }),
      };
      const { prediction } = await new MockActivityEnvironment({}, { logger: quiet })
        .run(projectChange, input)
        .then((r) => r as ChangeResult);
      shown = prediction;
      return { prediction };
    };
    const registered = await run(1);
    // …then a large import made the country slower, and another worker's refresh read it.
    await deliveries('AL', '2002', 200, 7);
    const refreshRead = await new CountryStatisticsCache(pool).get(['AL'], today);
    const asOf = refreshRead.get('AL')!.loadedAt;
    const fresh = await loadTransitStatistics(pool, { countryCode: 'AL', postalCode: '9001', today });
    const refreshFound = predictFromHistory({ dispatchDate: reg.dispatchDate, destination: reg.destination, state: initialState(reg.dispatchDate), today }, fresh); // prettier-ignore
    expect(refreshFound.window).not.toEqual(registered.prediction.window);

    // Without the refresh's time the write may still serve what it read at registration (the TTL)…
    expect((await run(2)).prediction).toEqual(registered.prediction);
    // …with it, it reads again and writes the window the refresh found.
    expect((await run(3, asOf)).prediction).toEqual(refreshFound);
  });
});
