// Coverage and width of predicted windows (domain/prediction-quality.ts), the figures of both
// `predictions quality` and the carrier-network simulator.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  median,
  notLearnedSummary,
  publishedShare,
  qualityByConfidence,
  summariseOutcomes,
  targetVerdict,
  wilsonInterval,
  windowBusinessDays,
  type PredictionOutcome,
} from '../../domain/prediction-quality.js';

// 2026-11-23 is a Monday; 2026-12-25 (Friday) is Christmas in FR; 2026-12-26 a Saturday.
const window = { min: '2026-11-24', max: '2026-11-26' };
const outcome = (deliveredDate: string, overrides: Partial<PredictionOutcome> = {}): PredictionOutcome => ({
  countryCode: 'FR',
  confidence: 'High',
  window,
  deliveredDate,
  ...overrides,
});

describe('windowBusinessDays', () => {
  it('counts both ends: a one-day window is 1, Tuesday to Thursday is 3', () => {
    expect(windowBusinessDays({ min: '2026-11-24', max: '2026-11-24' }, 'FR')).toBe(1);
    expect(windowBusinessDays(window, 'FR')).toBe(3);
  });

  it('skips the weekend and the destination country’s public holidays', () => {
    // Thursday 24 December to Tuesday 29 December in France: 24, 28, 29 (25 is Christmas, 26–27 a weekend).
    expect(windowBusinessDays({ min: '2026-12-24', max: '2026-12-29' }, 'FR')).toBe(3);
    // In Germany 26 December is a holiday too, but on a Saturday anyway: the same 3.
    expect(windowBusinessDays({ min: '2026-12-24', max: '2026-12-29' }, 'DE')).toBe(3);
    // Friday 20 to Monday 23 November: 2 business days.
    expect(windowBusinessDays({ min: '2026-11-20', max: '2026-11-23' }, 'FR')).toBe(2);
  });
});

describe('summariseOutcomes', () => {
  it('counts a delivery on either end of the window as inside, before it as early, after it as late', () => {
    const summary = summariseOutcomes([
      outcome('2026-11-24'),
      outcome('2026-11-26'),
      outcome('2026-11-25'),
      outcome('2026-11-23'),
      outcome('2026-11-27'),
    ]);
    expect(summary).toMatchObject({ dispatches: 5, inside: 3, early: 1, late: 1, coverage: 0.6, medianWindowDays: 3 });
  });

  it('compares calendar dates, not business days: the Saturday after a window ending on Friday is late, the Sunday before one starting on Monday early', () => {
    const friday = { min: '2026-11-25', max: '2026-11-27' };
    const monday = { min: '2026-11-23', max: '2026-11-25' };
    expect(summariseOutcomes([outcome('2026-11-28', { window: friday }), outcome('2026-11-22', { window: monday })])).toMatchObject({
      inside: 0,
      early: 1,
      late: 1,
    });
  });

  it('has no coverage, interval or width without outcomes', () => {
    expect(summariseOutcomes([])).toEqual({
      dispatches: 0,
      inside: 0,
      early: 0,
      late: 0,
      coverage: null,
      coverageInterval: null,
      medianWindowDays: null,
    });
  });
});

describe('qualityByConfidence', () => {
  it('reports High, Medium and Low in that order, each beside its target coverage (97 %, 92 %, 85 %)', () => {
    const rows = qualityByConfidence([
      outcome('2026-11-25'),
      outcome('2026-11-30'),
      outcome('2026-11-25', { confidence: 'Low', window: { min: '2026-11-24', max: '2026-12-01' } }),
    ]);
    expect(rows.map((r) => [r.confidence, r.dispatches, r.inside, r.coverage, r.targetCoverage, r.medianWindowDays])).toEqual([
      ['High', 2, 1, 0.5, 0.97, 3],
      ['Medium', 0, 0, null, 0.92, null],
      ['Low', 1, 1, 1, 0.85, 6],
    ]);
  });
});

describe('targetVerdict', () => {
  const row = (inside: number, n: number, targetCoverage: number) => ({ coverage: inside / n, coverageInterval: wilsonInterval(inside, n), targetCoverage }); // prettier-ignore

  it('is met when the coverage reaches the target', () => {
    expect(targetVerdict(row(97, 100, 0.97))).toBe('met');
  });

  it('is within noise when the coverage is below the target but the 95 % interval holds it', () => {
    // 18/20 = 90 %, interval 69.9 % – 97.2 %.
    expect(targetVerdict(row(18, 20, 0.97))).toBe('within_noise');
  });

  it('is missed when the whole 95 % interval lies below the target', () => {
    // 900/1000 = 90 %, interval 88.0 % – 91.7 %.
    expect(targetVerdict(row(900, 1000, 0.92))).toBe('missed');
  });

  it('is null without dispatches', () => {
    expect(targetVerdict({ coverage: null, coverageInterval: null, targetCoverage: 0.85 })).toBeNull();
  });
});

describe('publishedShare', () => {
  /** The largest count of n whose share (or the top of its interval) is still below the target: where rounding could cross it. */
  const lastBelow = (n: number, below: (inside: number) => boolean) => {
    let [lo, hi] = [-1, n]; // below(lo) holds (or lo = -1), below(hi) may not
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (below(mid)) lo = mid;
      else hi = mid;
    }
    return lo;
  };

  it('prints a coverage and the top of its interval at or above the target exactly when the verdict says so, for any count', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200_000 }),
        fc.constantFrom(0.97, 0.92, 0.85),
        fc.constantFrom('coverage', 'interval', 'anywhere'),
        fc.integer({ min: -2, max: 2 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom(3, 4),
        (n, target, near, offset, share, decimals) => {
          // Counts next to where the coverage, or the top of its interval, crosses the target, and any other.
          const anchor =
            near === 'coverage'
              ? lastBelow(n, (k) => k / n < target)
              : near === 'interval'
                ? lastBelow(n, (k) => wilsonInterval(k, n)![1] < target)
                : Math.round(share * n);
          const inside = Math.min(n, Math.max(0, anchor + offset));
          const coverage = inside / n;
          const interval = wilsonInterval(inside, n)!;
          const verdict = targetVerdict({ coverage, coverageInterval: interval, targetCoverage: target });
          expect(publishedShare(coverage, target, decimals) >= target).toBe(verdict === 'met');
          expect(publishedShare(interval[1], target, decimals) >= target).toBe(verdict !== 'missed');
          // Never more than one printed unit from the share itself.
          expect(Math.abs(publishedShare(coverage, target, decimals) - coverage)).toBeLessThanOrEqual(10 ** -decimals + 1e-12);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('rounds to the nearest otherwise: 2 of 3 is 0.6667', () => {
    expect(publishedShare(2 / 3, 0.85, 4)).toBe(0.6667);
    expect(publishedShare(226 / 233, 0.97, 4)).toBe(0.9699);
    expect(publishedShare(226 / 233, 0.97, 3)).toBe(0.969);
  });
});

describe('median', () => {
  it('is the middle value, or the mean of the two middle values', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });
});

describe('wilsonInterval', () => {
  it('brackets the observed share and narrows as the sample grows', () => {
    const small = wilsonInterval(9, 10)!;
    const large = wilsonInterval(900, 1000)!;
    expect(small[0]).toBeLessThan(0.9);
    expect(small[1]).toBeGreaterThan(0.9);
    expect(large[1] - large[0]).toBeLessThan(small[1] - small[0]);
    // Known value: 9/10 → [0.596, 0.982] (Wilson 1927, z = 1.96).
    expect(small[0]).toBeCloseTo(0.596, 3);
    expect(small[1]).toBeCloseTo(0.982, 3);
  });

  it('stays within [0, 1] at the extremes', () => {
    const all = wilsonInterval(10, 10)!;
    const none = wilsonInterval(0, 10)!;
    expect(all[1]).toBeCloseTo(1, 12);
    expect(all[1]).toBeLessThanOrEqual(1);
    expect(none[0]).toBeCloseTo(0, 12);
    expect(none[0]).toBeGreaterThanOrEqual(0);
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe('notLearnedSummary', () => {
  it('counts the deliveries the model did not learn from once each, and each of their reasons', () => {
    const learned = { ...outcome('2026-11-25'), learned: true, notLearned: [] };
    const late = { ...outcome('2026-11-25'), learned: false, notLearned: ['late_registration', 'late_report'] as const };
    const slow = { ...outcome('2026-12-10'), learned: false, notLearned: ['late_registration', 'implausible'] as const };
    expect(notLearnedSummary([learned, late, slow])).toEqual({
      dispatches: 2,
      reasons: { late_registration: 2, late_report: 1, delivered_before_dispatch: 0, implausible: 1 },
    });
  });

  it('names every reason with 0 when the model learned from every delivery', () => {
    expect(notLearnedSummary([])).toEqual({
      dispatches: 0,
      reasons: { late_registration: 0, late_report: 0, delivered_before_dispatch: 0, implausible: 0 },
    });
  });
});
