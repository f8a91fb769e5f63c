// The history the transit-statistics benchmark reads: one large country (FR_ROWS deliveries over the
// two-year look-back, the size an issuer's own import reaches) and a few smaller ones beside it, so
// the query must pick its country out of a shared table. Structure as a real postal network has
// it: ~100 postal prefixes, a few dozen codes each, volumes from busy cities to codes with a
// handful of cards, transit log-normal per prefix with a long tail. Seeded, so every run reads the
// same rows; written straight through copyTransitHistory (the COPY `history import` ends in).
import { addBusinessDays, businessDayOnOrAfter } from '../../domain/calendar.js';
import type { TransitRecord } from '../../db/transit-history.js';
import { prng } from '../prediction-quality/network.js';

export interface CountryPlan {
  countryCode: string;
  rows: number;
  prefixes: number;
  codesPerPrefix: number;
  /** Median transit of a typical prefix, in business days. */
  median: number;
}

const DAYS = 730;

/** Standard normal by Box–Muller. */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** `plan.rows` deliveries dispatched in the DAYS days before `today`, all delivered by then. */
export function* countryHistory(plan: CountryPlan, today: string, seed: number): Generator<TransitRecord> {
  const random = prng(seed);
  const todayMs = Date.parse(`${today}T00:00:00Z`);
  const areas: Array<{ postalCode: string; mu: number; weight: number }> = [];
  for (let p = 0; p < plan.prefixes; p += 1) {
    const prefix = String(p + 1).padStart(2, '0');
    const prefixMu = Math.log(plan.median) + 0.2 * normal(random);
    for (let c = 0; c < plan.codesPerPrefix; c += 1) {
      // Zipf-like volumes: a few busy codes, a long tail of quiet ones.
      areas.push({ postalCode: `${prefix}${String(c * 10).padStart(3, '0')}`, mu: prefixMu + 0.1 * normal(random), weight: 1 / (1 + c) });
    }
  }
  const totalWeight = areas.reduce((sum, a) => sum + a.weight, 0);
  for (const area of areas) {
    const count = Math.round((plan.rows * area.weight) / totalWeight);
    for (let i = 0; i < count; i += 1) {
      // Dispatched at least 15 days ago, so every card of the sample has arrived by today.
      const daysAgo = 15 + Math.floor(random() * (DAYS - 15));
      const dispatchDate = new Date(todayMs - daysAgo * 86_400_000).toISOString().slice(0, 10);
      let days = Math.max(1, Math.round(Math.exp(area.mu + 0.35 * normal(random))));
      if (random() < 0.04) days += Math.round(Math.exp(Math.log(4) + 0.6 * normal(random)));
      const deliveredDate = addBusinessDays(businessDayOnOrAfter(dispatchDate, plan.countryCode), days, plan.countryCode);
      yield { postalCode: area.postalCode, countryCode: plan.countryCode, dispatchDate, deliveredDate, businessDays: days };
    }
  }
}
