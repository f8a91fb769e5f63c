// Split-conformal calibration that moves each end of a window by its own number of days
// (domain/conformal-window.ts): a nested family of windows grown toward the side with more mass,
// the ⌈(n + 1)·coverage⌉-th smallest held-out score, and the window it picks.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { conformalEnds, nestedWindows } from '../../domain/conformal-window.js';
import { shortestInterval, total } from '../../domain/statistics.js';

/** Counts per day 0..n, at least one delivery in all. */
const histogram = fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 15 }).filter((h) => total(h) > 0);

describe('nestedWindows', () => {
  it('makes every window contain the one before it, from a single day to the fitted interval and beyond', () => {
    fc.assert(
      fc.property(histogram, fc.double({ min: 0.5, max: 0.99, noNaN: true }), (h, mass) => {
        const interval = shortestInterval(h, mass);
        const { windows, shrinks } = nestedWindows(h, interval);
        expect(windows[shrinks]).toEqual(interval);
        expect(windows[0][0]).toBe(windows[0][1]);
        for (let k = 1; k < windows.length; k += 1) {
          expect(windows[k][0]).toBeLessThanOrEqual(windows[k - 1][0]);
          expect(windows[k][1]).toBeGreaterThanOrEqual(windows[k - 1][1]);
          expect(windows[k][0]).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('grows a window toward the side with more mass next to it', () => {
    // Nothing before day 2, a tail after day 4: growth goes late first.
    const { windows, shrinks } = nestedWindows([0, 0, 10, 50, 10, 4, 2, 1], [2, 4]);
    expect(windows.slice(shrinks, shrinks + 4)).toEqual([
      [2, 4],
      [2, 5],
      [2, 6],
      [2, 7],
    ]);
  });
});

describe('conformalEnds', () => {
  it('moves only the late end when the held-out deliveries miss late', () => {
    const fitted = [0, 0, 10, 50, 10, 4, 2, 1];
    const heldOut = [0, 0, 10, 50, 10, 10, 10, 0];
    expect(conformalEnds(fitted, [2, 4], heldOut, 0.9)).toEqual({ early: 0, late: 2 });
  });

  it('narrows a window that holds more than the target of the held-out deliveries', () => {
    const fitted = [0, 5, 10, 50, 10, 5];
    const heldOut = [0, 0, 0, 100];
    expect(conformalEnds(fitted, [1, 5], heldOut, 0.9)).toEqual({ early: -2, late: -2 });
  });

  it('holds at least the target share of the held-out deliveries it was calibrated on, for any histograms', () => {
    fc.assert(
      fc.property(histogram, histogram, fc.constantFrom(0.85, 0.92, 0.97), (fitted, heldOut, coverage) => {
        const interval = shortestInterval(fitted, coverage);
        const ends = conformalEnds(fitted, interval, heldOut, coverage);
        const n = total(heldOut);
        if (Math.ceil((n + 1) * coverage) > n) return expect(ends).toBeNull();
        expect(ends).not.toBeNull();
        const [min, max] = [interval[0] - ends!.early, interval[1] + ends!.late];
        const inside = total(heldOut.slice(Math.max(0, min), max + 1));
        expect(inside).toBeGreaterThanOrEqual(Math.ceil((n + 1) * coverage));
      }),
    );
  });

  it('is null with fewer held-out deliveries than the rank at the coverage needs: 32 at 97 %', () => {
    const fitted = [0, 10, 50, 10];
    expect(conformalEnds(fitted, [1, 3], [0, 0, 32], 0.97)).toBeNull();
    expect(conformalEnds(fitted, [1, 3], [0, 0, 33], 0.97)).toEqual({ early: -1, late: -1 });
  });
});
