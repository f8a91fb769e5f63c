// The recent-shift detector's thresholds, calibrated by simulation (domain/recent-shift.ts
// SUSPECT_EVIDENCE, SHIFT_EVIDENCE; docs/recent-shifts.md): the evidence
// is the largest likelihood ratio over every start day and shift size, a scan statistic whose
// distribution on an area without change is not a one-degree χ². Here areas without change are drawn
// as a history really holds them: a transit body of 1–10 business days (narrow or wide, with or
// without a late tail), a norm estimated from 50–3,000 of its deliveries, 1–40 cards a day that vary
// by weekday, each day's count and transits drawn (not their expected values), and only the cards
// delivered by the period's cut; as of days that fall on a weekend, after a holiday, at the turn of a
// year. The share reaching each threshold is the false-alarm rate of one level read.
import { describe, expect, it } from '@jest/globals';
import { recentDeliveries, recentPeriod } from '../../domain/recent-change.js';
import { recentShift, SHIFT_EVIDENCE, SUSPECT_EVIDENCE } from '../../domain/recent-shift.js';

/** Areas simulated: the rate of 1 % is then known to about ±0.25 %. */
const AREAS = 1_500;
/** A seed of its own each run (printed when the check fails): the rates must hold for any draw. */
const SEED = Math.floor(Math.random() * 2 ** 31);
const AS_OF = ['2026-11-28', '2027-01-04', '2027-03-29', '2026-12-28'];
const COUNTRY = 'DE';
/** Relative volume of dispatches Sunday to Saturday. */
const WEEKDAY_VOLUME = [0.02, 1.2, 1, 1, 1, 0.9, 0.15];

/** mulberry32. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function simulate(seed: number): { suspected: number; detected: number; half: number } {
  const random = prng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const poisson = (mean: number) => {
    let [k, p] = [0, Math.exp(-mean)];
    let sum = p;
    for (const u = random(); u > sum && k < 1_000; sum += p) p *= mean / ++k;
    return k;
  };
  const periods = AS_OF.map((today) => ({ today, period: recentPeriod(today, COUNTRY) }));
  const counts = { suspected: 0, detected: 0, half: 0 };
  for (let i = 0; i < AREAS; i += 1) {
    const median = Math.exp(random() * Math.log(10));
    const sigma = 0.15 + 0.35 * random();
    const tail = 0.06 * random();
    const transit = () => Math.max(1, Math.round(median * Math.exp(sigma * normal()))) + (random() < tail ? 4 : 0);
    const norm = Array<number>(60).fill(0);
    for (let n = Math.round(50 * Math.exp(random() * Math.log(60))); n > 0; n -= 1) norm[Math.min(59, transit())] += 1;
    const { today, period } = periods[i % periods.length];
    const perDay = Math.exp(random() * Math.log(40));
    const groups = new Map<string, [number, number, number]>();
    for (const day of period) {
      const weekday = new Date(Date.parse(`${today}T00:00:00Z`) - day.sinceDays * 86_400_000).getUTCDay();
      for (let n = poisson(perDay * WEEKDAY_VOLUME[weekday]); n > 0; n -= 1) {
        const y = transit();
        if (y > day.observableDays) continue;
        const group = groups.get(`${day.sinceDays} ${y}`) ?? [day.sinceDays, y, 0];
        groups.set(`${day.sinceDays} ${y}`, [group[0], group[1], group[2] + 1]);
      }
    }
    const shift = recentShift(norm, recentDeliveries([...groups.values()], period), period);
    const evidence = shift?.evidence ?? 0;
    if (evidence >= SUSPECT_EVIDENCE) counts.suspected += 1;
    if (evidence >= SUSPECT_EVIDENCE / 2) counts.half += 1;
    if (shift?.confirmed && evidence >= SHIFT_EVIDENCE) counts.detected += 1;
  }
  return counts;
}

describe('the recent-shift thresholds, on simulated areas without change', () => {
  const counts = simulate(SEED);

  it('suspect about one area in a hundred at a level read, never more than two', () => {
    const rate = counts.suspected / AREAS;
    expect({ seed: SEED, rate, atMost: rate <= 0.02 }).toMatchObject({ atMost: true });
  });

  it('detect a shift in at most one area in two hundred', () => {
    const rate = counts.detected / AREAS;
    expect({ seed: SEED, rate, atMost: rate <= 0.005 }).toMatchObject({ atMost: true });
  });

  it('are the tail of the simulated distribution, not far beyond it: half the suspicion threshold is reached by more than one area in a hundred', () => {
    const rate = counts.half / AREAS;
    expect({ seed: SEED, rate, above: rate > 0.01 }).toMatchObject({ above: true });
  });
});
