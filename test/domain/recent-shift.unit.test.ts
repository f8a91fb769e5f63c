// The recent-shift detector and the maturity rule (domain/recent-shift.ts, domain/recent-change.ts;
// docs/recent-shifts.md) on constructed histories: an area's long-run
// transit distribution, and its recent deliveries as the SQL returns them (by days since dispatch
// and transit), only those delivered by today, so the youngest dispatches show only their fastest
// cards. The rules must hold for every network shape fast-check draws: bodies of 1–10 business
// days, narrow or wide, with or without a late tail.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';

import { addBusinessDays, businessDayOnOrAfter, businessDaysBetween } from '../../domain/calendar.js';
import {
  levelPredictives,
  predictFromHistory,
  RECENT_DAYS,
  type LevelStatistics,
  type TransitStatistics,
} from '../../domain/prediction-model.js';
import {
  MATURITY_QUANTILE,
  recentChange,
  recentDeliveries,
  recentPeriod,
  reportedUntil,
  withMatureRecent,
} from '../../domain/recent-change.js';
import {
  isMature,
  MIN_SHIFT_DELIVERIES,
  recentShift,
  SHIFT_EVIDENCE,
  SUSPECT_EVIDENCE,
  type RecentDelivery,
} from '../../domain/recent-shift.js';
import { TARGET_COVERAGE } from '../../domain/prediction-levels.js';
import { normalise, quantile, total } from '../../domain/statistics.js';
import { transitDistribution } from '../support/transit-distribution.js';

const TODAY = '2026-11-20'; // a Friday
const COUNTRY = 'FR';

const PERIOD = recentPeriod(TODAY, COUNTRY);
const dateBefore = (days: number) => new Date(Date.parse(`${TODAY}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);

/**
 * The recent deliveries of an area whose cards follow `p`, `perDay` dispatched each of the last
 * RECENT_DAYS days, those of the last `since` days `shift` business days later (never under 1):
 * each transit's expected count, rounded, and only the cards delivered by yesterday (recentPeriod).
 * `rounding`: 'daily' rounds each day's counts alone, so a transit rarer than one card in
 * `2·perDay` is never delivered (the detector's cases were found that way); 'running' rounds the
 * running total over the days (oldest first), so the period as a whole follows `p`, its tail
 * included, as a held-out set must for the window calibrated on it.
 */
function constructedRecent(
  p: number[],
  perDay: number,
  shift = 0,
  since = -1,
  rounding: 'daily' | 'running' = 'daily',
): Array<[number, number, number]> {
  const recent: Array<[number, number, number]> = [];
  const running = new Map<number, number>();
  for (let ago = RECENT_DAYS - 1; ago >= 0; ago -= 1) {
    const observable = PERIOD[ago].observableDays;
    const counts = new Map<number, number>();
    p.forEach((mass, days) => {
      const y = ago <= since ? Math.max(1, days + shift) : days;
      counts.set(y, (counts.get(y) ?? 0) + mass * perDay);
    });
    for (const [y, expected] of counts) {
      const before = rounding === 'running' ? (running.get(y) ?? 0) : 0;
      running.set(y, before + expected);
      const count = Math.round(before + expected) - Math.round(before);
      if (y <= observable && count > 0) recent.push([ago, y, count]);
    }
  }
  return recent.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/**
 * Whether some window of whole days [a, b] holds `coverage` of `p` to within EDGE: a window made
 * at that coverage is then set by a handful of held-out cards (the conformal rank), not by `p`.
 */
const EDGE = 0.003;
function onTheEdge(p: number[], coverage: number): boolean {
  for (let a = 0; a < p.length; a += 1)
    for (let b = a, mass = 0; b < p.length; b += 1) if (Math.abs((mass += p[b]) - coverage) < EDGE) return true;
  return false;
}

/**
 * Whether the sign test (domain/recent-shift.ts, SIGN_P) can tell a shift of `shift` begun `since`
 * days ago in `recent`: too few of its deliveries are old enough for it to run (the shift stays
 * suspected), or enough are, and the share of them past the norm's median on the shift's side is
 * three standard errors above the share the norm puts there. Read from the deliveries as they are, not from `p` moved by
 * the shift: a 1-day slowdown of a wide body moves that share by a few points, which a few hundred
 * deliveries cannot show (a 10-day body, sigma 0.38, +1 since 32 days), and a history rounded day by
 * day has lost the tail that moved it (an 8.5-day body's +1 since 33 days: 0.576 by `p`, 0.538 in
 * its 580 deliveries; free seeds, 2026-11-28).
 */
function signTestCanTell(p: number[], recent: RecentDelivery[], shift: number, since: number): boolean {
  const median = quantile(p, 0.5) ?? 0;
  const past = (y: number) => ((shift > 0 ? y > median : y < median) ? 1 : y === median ? 0.5 : 0);
  const norm = Math.max(
    0.5,
    p.reduce((sum, mass, y) => sum + mass * past(y), 0),
  );
  const oldEnough = (quantile(p, 0.95) ?? 0) + Math.max(0, shift);
  const told = recent.filter((d) => d.sinceDays <= since && d.observableDays >= oldEnough);
  const n = total(told.map((d) => d.count));
  const share = total(told.map((d) => d.count * past(d.transit))) / n;
  return n < MIN_SHIFT_DELIVERIES || (share - norm) * Math.sqrt(n) >= 3 * Math.sqrt(norm * (1 - norm));
}

/**
 * Twice the log-likelihood ratio that the true shift carries in `recent` (a slowdown of `shift` of
 * the dispatches of the last `since` days against no change), each delivery read as seen because its
 * transit was at most its dispatch's observable days: what the data can show, computed from `p`
 * alone. The detector maximises over every start and size, so it finds at least this much (less
 * only the floor it mixes into the norm).
 */
function trueEvidence(p: number[], recent: RecentDelivery[], shift: number, since: number): number {
  const q = normalise(p);
  const moved = Array.from({ length: q.length + shift + 1 }, () => 0);
  q.forEach((mass, x) => (moved[Math.max(1, x + shift)] += mass));
  const logSeen = (pmf: number[], y: number, a: number) =>
    Math.log(Math.max(pmf[y] ?? 0, 1e-9)) - Math.log(Math.max(total(pmf.slice(0, a + 1)), 1e-9));
  return 2 * recent.filter((d) => d.sinceDays <= since).reduce((sum, d) => sum + d.count * (logSeen(moved, d.transit, d.observableDays) - logSeen(q, d.transit, d.observableDays)), 0); // prettier-ignore
}

/** Histogram of `n` deliveries following `p` (expected counts, rounded). */
const histogramOf = (p: number[], n: number) => p.map((mass) => Math.round(mass * n));

function area(p: number[], recent: Array<[number, number, number]>, scale = 1): LevelStatistics {
  return { fit: histogramOf(p, 3_000 * scale), calibration: histogramOf(p, 1_000 * scale), recent };
}

/** A network with one area (code, prefix, country alike) whose recent deliveries are `recent`. */
function network(p: number[], recent: Array<[number, number, number]>): TransitStatistics {
  // The country reports its deliveries up to yesterday (domain/recent-change.ts reportedUntil).
  return {
    postalCode: area(p, recent),
    postalPrefix: area(p, recent, 2),
    country: area(p, recent, 10),
    operatorDelays: [],
    areaMoments: null,
  };
}

const networkShape = fc.record({
  median: fc.double({ min: 1, max: 10, noNaN: true }),
  sigma: fc.double({ min: 0.1, max: 0.5, noNaN: true }),
  tail: fc.double({ min: 0, max: 0.06, noNaN: true }),
});

const deliveriesOf = (recent: Array<[number, number, number]>): RecentDelivery[] => recentDeliveries(recent, PERIOD);

describe('the recent-shift detector', () => {
  it('reads no shift where recent deliveries follow the norm, though the youngest dispatches show only their fastest cards', () => {
    fc.assert(
      fc.property(networkShape, fc.integer({ min: 1, max: 40 }), ({ median, sigma, tail }, perDay) => {
        const p = transitDistribution(median, sigma, tail);
        const shift = recentShift(p, deliveriesOf(constructedRecent(p, perDay, 0, -1, 'running')), PERIOD);
        expect(shift?.evidence ?? 0).toBeLessThan(SUSPECT_EVIDENCE);
      }),
    );
  });

  it('finds a shift of 1–3 business days either way that started 5–35 days ago, its size and its start, once enough of its dispatches are old enough to tell', () => {
    fc.assert(
      fc.property(
        networkShape,
        fc.constantFrom(-3, -2, -1, 1, 2, 3),
        fc.integer({ min: 5, max: 35 }),
        ({ median, sigma, tail }, shift, since) => {
          const p = transitDistribution(median, sigma, tail);
          // A faster shift cannot take cards below one business day: only where the norm leaves room,
          // all but 1 % of it (with 10 %, a 6.4-day body of sigma 0.46 moved by -3 piled 9.5 % of its
          // cards at one day, which reads as -2; free seed, 2026-11-28).
          fc.pre(shift > 0 || (quantile(p, 0.01) ?? 0) + shift >= 1);
          // 60 cards a day, and at least 100 of the shift's deliveries from dispatches at least the
          // norm's 95th percentile (plus the shift) old. The history holds deliveries, not cards on
          // their way: of a younger dispatch only the fastest cards are known, and a 3-day slowdown
          // of 5 days ago in a 2-day network has delivered nothing yet (the next property).
          const recent = deliveriesOf(constructedRecent(p, 60, shift, since));
          const oldEnough = (quantile(p, 0.95) ?? 0) + Math.max(0, shift);
          fc.pre(recent.filter((d) => d.sinceDays <= since && d.observableDays >= oldEnough).reduce((n, d) => n + d.count, 0) >= 100); // prettier-ignore
          // And where those show it to the sign test: a 1-day slowdown of a 9.6-day body of sigma 0.45
          // moves the share past the median by less than its 900 deliveries can show (free seed,
          // 2026-11-28).
          fc.pre(signTestCanTell(p, recent, shift, since));
          const found = recentShift(p, recent, PERIOD);
          expect(found).toMatchObject({ days: shift, confirmed: true });
          expect(found!.evidence).toBeGreaterThanOrEqual(SHIFT_EVIDENCE);
          expect(found!.plausible[0]).toBeLessThanOrEqual(shift);
          expect(found!.plausible[1]).toBeGreaterThanOrEqual(shift);
          expect(Math.abs(found!.sinceDays - since)).toBeLessThanOrEqual(3);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('reads a younger shift, where enough of its cards have arrived to show it, as one of its direction, at most suspected', () => {
    fc.assert(
      fc.property(networkShape, fc.constantFrom(1, 2, 3), fc.integer({ min: 5, max: 35 }), ({ median, sigma, tail }, shift, since) => {
        const p = transitDistribution(median, sigma, tail);
        const recent = deliveriesOf(constructedRecent(p, 40, shift, since));
        // Where the true shift carries the evidence to be suspected, with a margin for the detector's
        // floor. A count of deliveries is no measure of it: a +1 of a 10-day body whose cards spread
        // over a week needs several hundred, a tight body's a few dozen (free seeds found 60 too few
        // for a 10-day body of sigma 0.38, +1 since 19 days, evidence 10.3; CI, 2026-11-28).
        // And with at least the deliveries the detector reads a span on (a 3-day body's +3 since 8
        // days shows as two cards at 5 days, evidence 18.8 but too few to read).
        fc.pre(trueEvidence(p, recent, shift, since) >= SUSPECT_EVIDENCE + 2);
        fc.pre(total(recent.filter((d) => d.sinceDays <= since).map((d) => d.count)) >= MIN_SHIFT_DELIVERIES);
        fc.pre(signTestCanTell(p, recent, shift, since));
        const found = recentShift(p, recent, PERIOD);
        expect(found!.evidence).toBeGreaterThanOrEqual(SUSPECT_EVIDENCE);
        expect(Math.sign(found!.days)).toBe(1);
        expect(found!.plausible[1]).toBeGreaterThanOrEqual(shift);
      }),
      { numRuns: 40 },
    );
  });

  // Found by the property above with a free seed (CI, 2026-11-26): the sign test read only dispatches
  // the norm's 95th percentile plus the shift old, here one day's, and failed; a slowdown's sign
  // test now reads every dispatch that could show a card past the median by the shift.
  it('reads a 1-day slowdown of a tight 6.5-day body begun 16 days ago', () => {
    const p = transitDistribution(6.500665080470395, 0.16327085874849173, 0);
    const found = recentShift(p, deliveriesOf(constructedRecent(p, 40, 1, 16)), PERIOD);
    expect(found?.evidence ?? 0).toBeGreaterThanOrEqual(SUSPECT_EVIDENCE);
  });

  it('moves the window by a shift it is sure of, and keeps its level', () => {
    fc.assert(
      fc.property(networkShape, fc.constantFrom(1, 2, 3), fc.integer({ min: 21, max: 35 }), ({ median, sigma, tail }, shift, since) => {
        const p = transitDistribution(median, sigma, tail);
        fc.pre((quantile(p, 0.95) ?? 0) <= 6);
        const steady = network(p, constructedRecent(p, 20, 0, -1, 'running'));
        const shifted = network(p, constructedRecent(p, 20, shift, since, 'running'));
        const input = {
          dispatchDate: `${TODAY}T09:00:00Z`,
          destination: { postal_code: '75011', country_code: COUNTRY },
          state: { status: 'dispatched' as const, statusSince: `${TODAY}T09:00:00Z` },
          today: TODAY,
        };
        const days = (stats: TransitStatistics) => {
          const { window, confidence } = predictFromHistory(input, stats);
          expect(confidence).toBe(predictFromHistory(input, steady).confidence);
          const start = businessDayOnOrAfter(TODAY, COUNTRY);
          return [businessDaysBetween(start, window.min, COUNTRY), businessDaysBetween(start, window.max, COUNTRY)];
        };
        // Not where some window of whole days holds the level's target to within a few held-out
        // cards: there the conformal rank picks a window by which side of the target those cards
        // fall, and the shifted area holds fewer of them (its dispatches mature `shift` days later),
        // e.g. a 1-day body whose 1–2 days hold 97.0 % (found with a free seed, 2026-11-28).
        fc.pre(!onTheEdge(p, TARGET_COVERAGE[predictFromHistory(input, steady).confidence]));
        const [min, max] = days(steady);
        const [shiftedMin, shiftedMax] = days(shifted);
        // The end moves by the shift; the start too, unless "not in the past" held it at today.
        expect(shiftedMax).toBe(max + shift);
        expect(shiftedMin).toBeGreaterThanOrEqual(min);
        expect(shiftedMin).toBeLessThanOrEqual(min + shift);
      }),
      { numRuns: 50 },
    );
  });

  // Found by the property above with a free seed (2026-11-28): detected as exactly +3, the window's
  // end moved by 4. Not the model: the constructed recent deliveries were rounded day by day, which
  // left them without the norm's tail (a transit of 7 days, 2 % of cards, is 0.4 of a card a day),
  // and the steady area, whose dispatches mature 3 days sooner, added more of those tail-free
  // deliveries to its held-out ones, so its 97 % window was a day shorter. Rounded as a running
  // total (constructedRecent 'running'), both held-out sets follow the norm.
  it('moves the window’s end by exactly a 3-day shift of a 4.1-day body begun 21 days ago', () => {
    const p = transitDistribution(4.089524596013024, 0.23693431702252427, 0);
    const input = {
      dispatchDate: `${TODAY}T09:00:00Z`,
      destination: { postal_code: '75011', country_code: COUNTRY },
      state: { status: 'dispatched' as const, statusSince: `${TODAY}T09:00:00Z` },
      today: TODAY,
    };
    const start = businessDayOnOrAfter(TODAY, COUNTRY);
    const end = (stats: TransitStatistics) => businessDaysBetween(start, predictFromHistory(input, stats).window.max, COUNTRY);
    expect(end(network(p, constructedRecent(p, 20, 3, 21, 'running')))).toBe(
      end(network(p, constructedRecent(p, 20, 0, -1, 'running'))) + 3,
    );
  });

  it('widens the window to a shift the youngest dispatches show too strongly to ignore, and lowers a High level to Medium', () => {
    // A 2-day slowdown that began 8 days ago in a 3-day network: too young for the sign test.
    const p = transitDistribution(3, 0.2, 0);
    const input = {
      dispatchDate: `${TODAY}T09:00:00Z`,
      destination: { postal_code: '75011', country_code: COUNTRY },
      state: { status: 'dispatched' as const, statusSince: `${TODAY}T09:00:00Z` },
      today: TODAY,
    };
    const steady = predictFromHistory(input, network(p, constructedRecent(p, 40)));
    const young = network(p, constructedRecent(p, 40, 2, 8));
    const predictives = levelPredictives(young);
    const change = recentChange(young, { postalCode: predictives.code, postalPrefix: predictives.prefix, country: predictives.country }, TODAY, COUNTRY); // prettier-ignore
    expect(change).toMatchObject({ uncertain: true, shift: { detected: false, confirmed: false } });
    expect(change.shift!.evidence).toBeGreaterThanOrEqual(SHIFT_EVIDENCE);
    expect(change.late).toBeGreaterThanOrEqual(2);
    expect(steady.confidence).toBe('High');
    const suspected = predictFromHistory(input, young);
    expect(suspected.confidence).toBe('Medium');
    expect(suspected.window.max > steady.window.max).toBe(true);
  });

  // Weak readings found by a search over shapes, young shifts and low volumes (bench/prediction-quality/README.md).
  it.each([
    [2, 0.3, -2, 8, 1],
    [2, 0.4, -1, 20, 3],
    [3, 0.3, -2, 5, 2],
    [2, 0.5, -1, 30, 2],
  ])(
    'costs at most a business day on its side for a shift it only suspects (body %p bd, spread %p, shift %p since %p days, %p a day)',
    (median, sigma, shift, since, perDay) => {
      const p = transitDistribution(median, sigma, 0.02);
      const stats = network(p, constructedRecent(p, perDay, shift, since));
      const predictives = levelPredictives(stats);
      const change = recentChange(stats, { postalCode: predictives.code, postalPrefix: predictives.prefix, country: predictives.country }, TODAY, COUNTRY); // prettier-ignore
      expect(change.shift).toMatchObject({ detected: false });
      expect(change.shift!.evidence).toBeGreaterThanOrEqual(SUSPECT_EVIDENCE);
      expect(change.shift!.evidence).toBeLessThan(SHIFT_EVIDENCE);
      expect(change.uncertain).toBe(true);
      expect([change.early, change.late]).toEqual(change.shift!.days > 0 ? [0, 1] : [-1, 0]);
    },
  );

  it('reads no shift where the history stops (an import that ends 10 days ago), only where an area goes quiet while its country reports', () => {
    fc.assert(
      fc.property(networkShape, fc.integer({ min: 3, max: 20 }), ({ median, sigma, tail }, stoppedDays) => {
        const p = transitDistribution(median, sigma, tail);
        // Deliveries made up to `stoppedDays` ago, nothing reported since, in the whole country.
        const stopped = (recent: Array<[number, number, number]>) =>
          recent.filter(([since, transit]) => addBusinessDays(businessDayOnOrAfter(dateBefore(since), COUNTRY), transit, COUNTRY) <= dateBefore(stoppedDays)); // prettier-ignore
        const recent = stopped(constructedRecent(p, 20));
        const stats: TransitStatistics = { ...network(p, recent), country: area(p, stopped(constructedRecent(p, 200)), 10) };
        const predictives = levelPredictives(stats);
        const norms = { postalCode: predictives.code, postalPrefix: predictives.prefix, country: predictives.country };
        expect(recentChange(stats, norms, TODAY, COUNTRY).shift).toBeNull();
      }),
      { numRuns: 40 },
    );
  });

  it('ignores fewer than MIN_SHIFT_DELIVERIES recent deliveries, however slow', () => {
    const p = transitDistribution(3, 0.3, 0.02);
    const few: Array<[number, number, number]> = Array.from({ length: MIN_SHIFT_DELIVERIES - 1 }, (_, i) => [20 + i, 12, 1]);
    expect(recentShift(p, deliveriesOf(few), PERIOD)).toMatchObject({ days: 0, evidence: 0 });
  });

  it('does not take a minority of very late cards for a shift of the area', () => {
    // 30 cards a day on time, and on each of 8 days 6 cards 6 days late: a fifth of them, not a shift.
    const p = transitDistribution(3, 0.3, 0.02);
    const recent = constructedRecent(p, 30);
    for (let ago = 12; ago < 20; ago += 1) recent.push([ago, 9, 6]);
    const found = recentShift(p, deliveriesOf(recent), PERIOD);
    expect(found?.evidence ?? 0).toBeLessThan(SUSPECT_EVIDENCE);
  });
});

describe('the maturity rule', () => {
  it('counts a recent delivery once its dispatch is as old as the p99 transit, in business days, of whichever is slower of the country and the area', () => {
    fc.assert(
      fc.property(networkShape, fc.integer({ min: 1, max: 20 }), ({ median, sigma, tail }, perDay) => {
        const p = transitDistribution(median, sigma, tail);
        const recent = constructedRecent(p, perDay, 0, -1, 'running');
        const stats = network(p, recent);
        const predictives = levelPredictives(stats);
        const norms = { postalCode: predictives.code, postalPrefix: predictives.prefix, country: predictives.country };
        const change = recentChange(stats, norms, TODAY, COUNTRY);
        expect(change.shift).toBeNull();
        const withRecent = withMatureRecent(stats, norms, change, TODAY, COUNTRY);
        const p99 = Math.max(quantile(norms.country, MATURITY_QUANTILE)!, quantile(norms.postalCode, MATURITY_QUANTILE)!);
        // Read to the day the country's deliveries reach (reportedUntil): a sparse area's running
        // total may leave yesterday without a delivery.
        const period = recentPeriod(TODAY, COUNTRY, reportedUntil(stats.country.recent, TODAY, COUNTRY));
        const mature = recentDeliveries(recent, period).filter((d) => d.observableDays >= p99 && d.transit <= d.observableDays);
        expect(mature.every((d) => isMature(d, p99))).toBe(true);
        // The mature ones join the held-out deliveries, nothing else does, and the fit is untouched.
        expect(total(withRecent.postalCode.calibration) - total(stats.postalCode.calibration)).toBe(
          mature.reduce((n, d) => n + d.count, 0),
        );
        expect(withRecent.postalCode.fit).toEqual(stats.postalCode.fit);
      }),
    );
  });

  it('follows the network: a fast network counts a week-old dispatch, a slow one does not', () => {
    const fast = transitDistribution(1.5, 0.2, 0);
    const slow = transitDistribution(9, 0.3, 0.04);
    const weekOld = { observableDays: businessDaysBetween(businessDayOnOrAfter(dateBefore(7), COUNTRY), TODAY, COUNTRY) };
    expect(isMature(weekOld, quantile(fast, MATURITY_QUANTILE)!)).toBe(true);
    expect(isMature(weekOld, quantile(slow, MATURITY_QUANTILE)!)).toBe(false);
    // ...and the slow network counts it once its p99 has passed.
    const p99 = quantile(slow, MATURITY_QUANTILE)!;
    expect(isMature({ observableDays: businessDaysBetween(TODAY, addBusinessDays(TODAY, p99, COUNTRY), COUNTRY) }, p99)).toBe(true);
  });

  it('scores the mature deliveries of a shifted area as the norm they are corrected for: the shift taken back', () => {
    const p = transitDistribution(3, 0.3, 0.02);
    const stats = network(p, constructedRecent(p, 20, 2, 30));
    const predictives = levelPredictives(stats);
    const norms = { postalCode: predictives.code, postalPrefix: predictives.prefix, country: predictives.country };
    const change = recentChange(stats, norms, TODAY, COUNTRY);
    expect(change).toMatchObject({ early: 2, late: 2, uncertain: false });
    const added = withMatureRecent(stats, norms, change, TODAY, COUNTRY).postalCode.calibration.map((n, d) => n - (stats.postalCode.calibration[d] ?? 0)); // prettier-ignore
    // Taken back by 2 days, the added deliveries have the norm's median, not two days more.
    expect(quantile(added, 0.5)).toBe(quantile(p, 0.5));
  });
});
