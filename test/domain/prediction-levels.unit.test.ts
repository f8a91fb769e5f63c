// The confidence levels (domain/prediction-levels.ts): each level's coverage target, the rules that
// give a window its level from how well the data pin it down (deliveries to the code, spread,
// detected slowdown, declared delay, held-out deliveries to calibrate with), and how many held-out
// deliveries calibrating a target needs.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  calibrationSizeFor,
  confidenceFor,
  HIGH_MIN_HISTORY,
  MEDIUM_MIN_HISTORY,
  minConformalSize,
  spreadOf,
  TARGET_COVERAGE,
  type ConfidenceSignals,
} from '../../domain/prediction-levels.js';

/** A histogram from transit times: [2, 2, 3] → [0, 0, 2, 1]. */
function hist(days: number[]): number[] {
  const h: number[] = [];
  for (const d of days) {
    while (h.length <= d) h.push(0);
    h[d] += 1;
  }
  return h;
}
/** 2 to 4 business days in a steady mix, like French letter post. */
const steady = (n: number) => Array.from({ length: n }, (_, i) => [2, 3, 3, 3, 4][i % 5]);

describe('confidence', () => {
  const tight = hist(steady(100));
  const wide = hist(Array.from({ length: 100 }, (_, i) => 1 + (i % 10)));
  /** Signals of a well-known code in a normal week, with enough held-out deliveries to calibrate 97 %. */
  const known = (overrides: Partial<ConfidenceSignals> = {}): ConfidenceSignals => ({
    postalCodeHistory: HIGH_MIN_HISTORY,
    spread: spreadOf(tight),
    uncertainShift: false,
    declaredDelayDays: 0,
    calibrationSize: 1_000,
    ...overrides,
  });

  it('is Low below 10 deliveries to the postal code, however tight', () => {
    expect(confidenceFor(known({ postalCodeHistory: 0 }))).toBe('Low');
    expect(confidenceFor(known({ postalCodeHistory: MEDIUM_MIN_HISTORY - 1 }))).toBe('Low');
  });

  it('is Medium from 10 deliveries and High from 50 when the spread is small', () => {
    expect(confidenceFor(known({ postalCodeHistory: MEDIUM_MIN_HISTORY }))).toBe('Medium');
    expect(confidenceFor(known({ postalCodeHistory: HIGH_MIN_HISTORY }))).toBe('High');
  });

  it('is not High when deliveries spread over many days, however many there are', () => {
    expect(confidenceFor(known({ postalCodeHistory: 10_000, spread: spreadOf(wide) }))).toBe('Low');
  });

  it('is never High where a recent shift is uncertain or a delay declared, or for a new code, whatever else holds', () => {
    const signals = fc.record({
      postalCodeHistory: fc.nat({ max: 100_000 }),
      spread: fc.nat({ max: 20 }),
      uncertainShift: fc.boolean(),
      declaredDelayDays: fc.nat({ max: 10 }),
      calibrationSize: fc.nat({ max: 100_000 }),
    });
    fc.assert(
      fc.property(signals, fc.integer({ min: 1, max: 10 }), (s, days) => {
        expect(confidenceFor({ ...s, uncertainShift: true })).not.toBe('High');
        expect(confidenceFor({ ...s, declaredDelayDays: days })).toBe('Low');
        expect(confidenceFor({ ...s, postalCodeHistory: 0 })).toBe('Low');
      }),
    );
  });

  it('caps a well-known code at Medium during an uncertain recent shift and at Low under a declared delay', () => {
    expect(confidenceFor(known({ uncertainShift: true }))).toBe('Medium');
    expect(confidenceFor(known({ declaredDelayDays: 3 }))).toBe('Low');
  });

  it('is not High when no level has the 100 held-out deliveries that calibrating 97 % needs', () => {
    // 33 is the least for which the conformal rank exists at 97 %; 100 leaves three expected misses.
    expect(calibrationSizeFor(TARGET_COVERAGE.High)).toBe(100);
    expect(confidenceFor(known({ calibrationSize: 99 }))).toBe('Medium');
    expect(confidenceFor(known({ calibrationSize: 100 }))).toBe('High');
  });

  it('needs 38 held-out deliveries to calibrate 92 % and 20 for 85 %', () => {
    expect(calibrationSizeFor(TARGET_COVERAGE.Medium)).toBe(38);
    expect(calibrationSizeFor(TARGET_COVERAGE.Low)).toBe(20);
  });

  it('never falls when the code has more deliveries or more are held out, with the same spread and conditions', () => {
    const rank = { Low: 0, Medium: 1, High: 2 } as const;
    const signals = fc.record({
      postalCodeHistory: fc.nat({ max: 1_000 }),
      spread: fc.nat({ max: 8 }),
      uncertainShift: fc.boolean(),
      declaredDelayDays: fc.nat({ max: 3 }),
      calibrationSize: fc.nat({ max: 1_000 }),
    });
    fc.assert(
      fc.property(signals, fc.nat({ max: 1_000 }), fc.nat({ max: 1_000 }), (s, more, moreHeldOut) => {
        const before = rank[confidenceFor(s)];
        const after = rank[confidenceFor({ ...s, postalCodeHistory: s.postalCodeHistory + more, calibrationSize: s.calibrationSize + moreHeldOut })]; // prettier-ignore
        expect(after).toBeGreaterThanOrEqual(before);
      }),
    );
  });

  it('states High ≥ 97 %, Medium ≥ 92 %, Low ≥ 85 %, and the finite-sample calibration size each needs', () => {
    expect(TARGET_COVERAGE).toEqual({ High: 0.97, Medium: 0.92, Low: 0.85 });
    expect([0.97, 0.92, 0.85].map(minConformalSize)).toEqual([33, 12, 6]);
    for (const coverage of [0.97, 0.92, 0.85]) {
      const n = minConformalSize(coverage);
      // The rank ⌈(n + 1)·coverage⌉ fits in n scores, and not in one fewer.
      expect(Math.ceil((n + 1) * coverage)).toBeLessThanOrEqual(n);
      expect(Math.ceil(n * coverage)).toBeGreaterThan(n - 1);
    }
  });
});
