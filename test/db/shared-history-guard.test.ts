// docs/predictions.md "History and its bounds", as a property over the day it is read on: one
// issuer's recent deliveries, counted up to the share the SQL lets them weigh (at most every other
// source of the area together, db/transit-statistics-sql.ts countedAsRecent), never make the
// detector confirm a shift (domain/recent-shift.ts) that the area's other sources do not show,
// whatever today is (a weekend, a public holiday, the turn of a year), whatever the issuer's
// deliveries are: how many, how slow or fast, dispatched on which days. Against the real test
// Postgres, in Paraguay, which no other test file uses (its history is cleared before each case).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { addBusinessDays, businessDayOnOrAfter } from '../../domain/calendar.js';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import type { TransitRecord } from '../../db/transit-history.js';
import { loadTransitStatistics } from '../../db/transit-statistics.js';
import { levelPredictives, type TransitStatistics } from '../../domain/prediction-model.js';
import { recentChange } from '../../domain/recent-change.js';
import { requireTestEnv } from '../support/env.js';
import { insertHistory } from '../support/history-rows.js';
import { daysBefore } from '../support/today.js';

const COUNTRY = 'PY';
const CODE = '1209';
let pool: Pool;
let issuerId: string;

beforeAll(async () => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-shared-history-guard' });
  issuerId = (await createIssuer(pool, 'Guard Issuer')).id;
});

afterAll(async () => {
  await pool?.end();
});

/** A delivery to the code dispatched `ago` days before `today`, `transit` business days later; null if not delivered before today. */
function delivery(today: string, ago: number, transit: number): TransitRecord | null {
  const dispatchDate = daysBefore(today, ago);
  const deliveredDate = addBusinessDays(businessDayOnOrAfter(dispatchDate, COUNTRY), transit, COUNTRY);
  if (deliveredDate >= today) return null;
  return { countryCode: COUNTRY, postalCode: CODE, dispatchDate, deliveredDate, businessDays: transit };
}

/** Whether the detector confirms a shift of the code's area in these statistics. */
function confirmsShift(stats: TransitStatistics, today: string): boolean {
  const p = levelPredictives(stats);
  const change = recentChange(stats, { postalCode: p.code, postalPrefix: p.prefix, country: p.country }, today, COUNTRY);
  return change.shift?.detected === true;
}

const dayOf = fc
  .integer({ min: Date.UTC(2026, 0, 1) / 86_400_000, max: Date.UTC(2028, 11, 31) / 86_400_000 })
  .map((epochDay) => new Date(epochDay * 86_400_000).toISOString().slice(0, 10));

describe('one issuer’s recent deliveries, as of any day', () => {
  it('never confirm a shift of an area that its other sources do not show', async () => {
    await fc.assert(
      fc.asyncProperty(
        dayOf,
        // The area's norm: `base` business days, spread over `spread` more.
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 2 }),
        // Its other sources: imported deliveries, `perDay` of each recent dispatch day.
        fc.integer({ min: 1, max: 3 }),
        // The issuer: how many deliveries, from which dispatch days, how much slower (or faster) than the norm.
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 38 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: -3, max: 9 }),
        async (today, base, spread, perDay, count, firstAgo, spanDays, moved) => {
          await pool.query('DELETE FROM transit_history WHERE country_code = $1', [COUNTRY]);
          const norm = (i: number) => base + (i % (spread + 1));
          const others = [
            ...Array.from({ length: 200 }, (_, i) => delivery(today, 45 + i * 2, norm(i))),
            ...Array.from({ length: 41 * perDay }, (_, i) => delivery(today, 1 + Math.floor(i / perDay), norm(i))),
          ].filter((row): row is TransitRecord => row !== null);
          await insertHistory(pool, others);
          const query = { countryCode: COUNTRY, postalCode: CODE, today };
          const before = confirmsShift(await loadTransitStatistics(pool, query), today);
          const issuers = Array.from({ length: count }, (_, i) =>
            delivery(today, firstAgo + (i % (spanDays + 1)), Math.max(0, norm(i) + moved)),
          ).filter((row): row is TransitRecord => row !== null && Date.parse(row.dispatchDate) > Date.parse(daysBefore(today, 42)));
          await insertHistory(pool, issuers, issuerId);
          const after = confirmsShift(await loadTransitStatistics(pool, query), today);
          expect({ today, confirmedByTheIssuer: after && !before }).toEqual({ today, confirmedByTheIssuer: false });
        },
      ),
      { numRuns: 50 },
    );
  }, 120_000);
});
