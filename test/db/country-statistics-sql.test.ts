// The country level's statement (db/transit-statistics.ts loadCountryStatistics), which works on
// counts by dispatch day and business days rather than on the rows, against the real test Postgres:
// it must read exactly what the per-level statement reads over every row of the country (the
// reference in test/support/country-statistics-reference.ts), histograms, recent counts
// and area moments alike, compared as JSON so a last-bit difference fails. Each test uses its own
// countries, which no other test file uses.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { copyTransitHistory, type TransitRecord } from '../../db/transit-history.js';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { ISSUER_WEIGHT_FLOOR } from '../../db/transit-statistics-sql.js';
import { loadCountryStatistics, loadTransitStatistics } from '../../db/transit-statistics.js';
import { prng } from '../../bench/prediction-quality/network.js';
import { loadCountryStatisticsReference } from '../support/country-statistics-reference.js';
import { requireTestEnv } from '../support/env.js';
import { asOfDates } from '../support/today.js';

let pool: Pool;
const DAY = 86_400_000;
/** The day the statistics are read as of (test/support/today.ts): a fixed day, never the wall clock's. */
const today = asOfDates()[0];
const daysBefore = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) - days * DAY).toISOString().slice(0, 10);

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 4, applicationName: 'test-country-statistics-sql' });
});

afterAll(async () => {
  await pool?.end();
});

async function insert(rows: TransitRecord[]): Promise<void> {
  await copyTransitHistory(
    pool,
    (async function* () {
      yield* rows;
    })(),
  );
}

/** A delivery to the code dispatched `ago` days before today, `businessDays` long (delivered after as many calendar days). */
function delivery(countryCode: string, postalCode: string, ago: number, businessDays: number, deliveredAgo?: number): TransitRecord {
  return {
    countryCode,
    postalCode,
    dispatchDate: daysBefore(today, ago),
    deliveredDate: daysBefore(today, deliveredAgo ?? Math.max(0, ago - businessDays)),
    businessDays,
  };
}

/**
 * A seeded history over three years: clustered and sparse dispatch days (many deliveries on one day,
 * none for weeks), small integer transits with many ties, a long tail past the histogram's and the
 * moments' caps, a slowdown in the last weeks, immature dispatches, some delivered after `today`
 * and some before the look-back period; postal codes from busy to single-delivery ones.
 */
function generatedHistory(countryCode: string, seed: number, rows: number): TransitRecord[] {
  const random = prng(seed);
  const history: TransitRecord[] = [];
  const busyDays = Array.from({ length: 12 }, () => Math.floor(random() * 1100));
  for (let i = 0; i < rows; i += 1) {
    const ago = random() < 0.3 ? busyDays[Math.floor(random() * busyDays.length)] : Math.floor(random() * 1100);
    const slow = ago < 40 ? 2 : 0;
    let days = 1 + Math.floor(random() * 4) + slow;
    if (random() < 0.05) days += 10 + Math.floor(random() * 70);
    const code = `${10 + Math.floor(random() * 6)}${String(Math.floor(random() * random() * 30)).padStart(3, '0')}`;
    history.push(delivery(countryCode, code, ago, days, random() < 0.01 ? -3 : undefined));
  }
  return history;
}

const asJson = (statistics: Map<string, unknown>) => JSON.stringify([...statistics]);

/** Deliveries the service recorded for an issuer's dispatches (as recordServiceDelivery writes them). */
async function insertForIssuer(issuerId: string, rows: TransitRecord[]): Promise<void> {
  for (const row of rows)
    await pool.query(
      `INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source, issuer_id)
       VALUES ($1, $2, $3, $4, $5, $6, 'service', $7)`,
      [row.postalCode, row.countryCode, row.postalCode.slice(0, 2), row.dispatchDate, row.deliveredDate, row.businessDays, issuerId],
    );
}

describe('the country statement over counts', () => {
  it('reads exactly what the per-level statement reads over every row, for several countries and days', async () => {
    await insert([...generatedHistory('IS', 1, 3000), ...generatedHistory('CY', 2, 1200), ...generatedHistory('SM', 3, 150)]);
    const countries = ['IS', 'CY', 'SM', 'MC'];
    for (const day of [today, daysBefore(today, 10), daysBefore(today, 200), daysBefore(today, 700)]) {
      const reference = await loadCountryStatisticsReference(pool, countries, day);
      expect(reference.get('IS')!.country.recent.length).toBeGreaterThan(0);
      expect(asJson(await loadCountryStatistics(pool, countries, day))).toBe(asJson(reference));
    }
  });

  it('caps each issuer’s recent deliveries exactly as the per-level statement does', async () => {
    await insert(generatedHistory('FO', 4, 800));
    const [big, small] = [(await createIssuer(pool, 'Big')).id, (await createIssuer(pool, 'Small')).id];
    const random = prng(5);
    await insertForIssuer(big, Array.from({ length: 300 }, () => delivery('FO', `${100 + Math.floor(random() * 3)}`, 2 + Math.floor(random() * 15), 1 + Math.floor(random() * 9)))); // prettier-ignore
    await insertForIssuer(
      small,
      Array.from({ length: 7 }, (_, i) => delivery('FO', '100', 3 + i, 2 + (i % 3))),
    );
    for (const day of [today, daysBefore(today, 5)]) {
      const reference = await loadCountryStatisticsReference(pool, ['FO'], day);
      expect(asJson(await loadCountryStatistics(pool, ['FO'], day))).toBe(asJson(reference));
    }
  });

  it('weighs each issuer’s mature deliveries exactly as the per-level statement does', async () => {
    // Two issuers beside an imported history: one with more mature deliveries than every other
    // source of the country (weighed down, to fractional counts), one with few (counted in full).
    await insert(generatedHistory('UZ', 6, 400));
    const [big, small] = [(await createIssuer(pool, 'Big')).id, (await createIssuer(pool, 'Small')).id];
    const random = prng(7);
    await insertForIssuer(big, Array.from({ length: 700 }, () => delivery('UZ', `${10 + Math.floor(random() * 3)}0${Math.floor(random() * 4)}`, 29 + Math.floor(random() * 300), 1 + Math.floor(random() * 9)))); // prettier-ignore
    await insertForIssuer(
      small,
      Array.from({ length: 30 }, (_, i) => delivery('UZ', '10001', 40 + i * 3, 2 + (i % 4))),
    );
    for (const day of [today, daysBefore(today, 20), daysBefore(today, 400)]) {
      const reference = await loadCountryStatisticsReference(pool, ['UZ'], day);
      expect(asJson(await loadCountryStatistics(pool, ['UZ'], day))).toBe(asJson(reference));
    }
    // The big issuer's 700 count for at most ISSUER_WEIGHT_FLOOR.country (the country's other mature
    // deliveries, under 430 of them, are fewer), in fractions; not for 700.
    const country = (await loadCountryStatistics(pool, ['UZ'], today)).get('UZ')!.country;
    const weight = [...country.fit, ...country.calibration].reduce((a, b) => a + b, 0);
    expect(weight).toBeLessThan(400 + 30 + ISSUER_WEIGHT_FLOOR.country + 1);
    expect(Number.isInteger(weight)).toBe(false);
  });

  it('counts no issuer for more than every other source of an area’s recent deliveries together', async () => {
    // 20 recent imported deliveries to one Greenland code, one issuer's 60, another's 5: the first
    // counts for 25 (the others' 20 + 5), the second in full.
    await insert(Array.from({ length: 20 }, (_, i) => delivery('GL', '3900', 5 + (i % 10), 2)));
    const [big, small] = [(await createIssuer(pool, 'Big')).id, (await createIssuer(pool, 'Small')).id];
    await insertForIssuer(
      big,
      Array.from({ length: 60 }, (_, i) => delivery('GL', '3900', 10 + (i % 5), 9)),
    );
    await insertForIssuer(
      small,
      Array.from({ length: 5 }, () => delivery('GL', '3900', 6, 3)),
    );
    const country = (await loadCountryStatistics(pool, ['GL'], today)).get('GL')!;
    const area = await loadTransitStatistics(pool, { countryCode: 'GL', postalCode: '3900', today });
    for (const level of [country.country, area.postalPrefix, area.postalCode]) {
      const byTransit = new Map<number, number>();
      for (const [, transit, count] of level.recent) byTransit.set(transit, (byTransit.get(transit) ?? 0) + count);
      // 20 × 2 days, 5 × 3, and 25 × 9 of the first issuer's 60: half of the 50, not 60 of 85.
      expect(Object.fromEntries(byTransit)).toEqual({ 2: 20, 3: 5, 9: 25 });
    }
  });

  it('counts recent deliveries by days since dispatch and transit (none of them an issuer’s: imported), and none when nothing was dispatched recently, as the reference does', async () => {
    await insert([
      ...[3, 3, 4].map((days) => delivery('MT', '1000', 300, days)),
      ...[2, 2, 5].map((days) => delivery('LI', '9490', 10, days)),
    ]);
    const statistics = await loadCountryStatistics(pool, ['MT', 'LI'], today);
    expect(statistics.get('MT')!.country.recent).toEqual([]);
    expect(statistics.get('LI')!.country.recent).toEqual([
      [10, 2, 2, 0],
      [10, 5, 1, 0],
    ]);
    expect(asJson(statistics)).toBe(asJson(await loadCountryStatisticsReference(pool, ['MT', 'LI'], today)));
  });

  it('reads a country with only recent dispatches as the reference does: recent counts, no histogram, no moments', async () => {
    await insert([1, 2, 2].map((days) => delivery('AD', '500', 5, days)));
    const statistics = (await loadCountryStatistics(pool, ['AD'], today)).get('AD')!;
    expect(statistics.areaMoments).toBeNull();
    expect(statistics.country.fit).toEqual([]);
    expect(statistics.country.recent).toEqual([
      [5, 1, 1, 0],
      [5, 2, 2, 0],
    ]);
    expect(asJson(await loadCountryStatistics(pool, ['AD'], today))).toBe(
      asJson(await loadCountryStatisticsReference(pool, ['AD'], today)),
    );
  });
});
