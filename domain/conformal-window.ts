// Split-conformal calibration of a delivery window that may move each end by a different number
// of days (docs/predictions.md "Calibration"). Transit has a long late tail: when a window misses,
// it misses late, so a correction that widens both ends alike (statistics.ts conformalCorrection)
// pays a day at the early end for nothing. Here the window grows (or shrinks) one day at a time
// on the side where the fitted distribution has more mass next to it, which makes a nested family
// of windows J_k (k < 0: shrunk, k = 0: the fitted interval, k > 0: grown); a held-out delivery's
// score is the first k whose window holds it, and the ⌈(n + 1)·coverage⌉-th smallest score picks
// the window. The family depends only on the fitted distribution, not on the held-out deliveries,
// so this is split-conformal prediction with its guarantee: a new exchangeable delivery falls in
// the chosen window with probability ≥ coverage. Pure.
import { total, type Histogram } from './statistics.js';

/** Days moved at each end: the window [lo, hi] becomes [lo − early, hi + late] (either may be negative). */
export interface EndCorrection {
  early: number;
  late: number;
}

/** Beyond this many days of growth a held-out delivery is not held by any window of the family. */
const MAX_GROWTH = 200;

/**
 * The nested windows from [lo, hi] (index `shrinks` is the fitted interval itself): shrunk one day
 * at a time down to a single day, dropping the end with less mass (the early end on a tie), and
 * grown up to MAX_GROWTH days, adding the neighbouring day with more mass (on a tie, the side grown
 * less so far, then the late side). Day −1 and earlier hold nothing and are never added.
 */
export function nestedWindows(h: Histogram, [lo, hi]: [number, number]): { windows: Array<[number, number]>; shrinks: number } {
  const mass = (d: number) => (d >= 0 && d < h.length ? h[d] : 0);
  const shrunk: Array<[number, number]> = [];
  for (let [a, b] = [lo, hi]; a < b;) {
    if (mass(a) <= mass(b)) a += 1;
    else b -= 1;
    shrunk.push([a, b]);
  }
  const grown: Array<[number, number]> = [];
  let [a, b] = [lo, hi];
  for (let step = 0; step < MAX_GROWTH; step += 1) {
    const canEarly = a > 0;
    const early = canEarly ? mass(a - 1) : -1;
    const late = mass(b + 1);
    const grownEarly = lo - a;
    const grownLate = b - hi;
    const takeEarly = canEarly && (early > late || (early === late && grownEarly < grownLate));
    if (takeEarly) a -= 1;
    else b += 1;
    grown.push([a, b]);
  }
  return { windows: [...shrunk.reverse(), [lo, hi], ...grown], shrinks: shrunk.length };
}

/**
 * The split-conformal end correction of the fitted window [lo, hi] of distribution `h`, from
 * held-out deliveries (a histogram of counts) at `coverage`; null when there are too few held-out
 * deliveries for that rank (fewer than ⌈(n + 1)·coverage⌉ ≤ n allows: 33 for 97 %) or one lies
 * beyond the family's reach.
 */
export function conformalEnds(h: Histogram, interval: [number, number], heldOut: Histogram, coverage: number): EndCorrection | null {
  const n = total(heldOut);
  const rank = Math.ceil((n + 1) * coverage);
  if (n === 0 || rank > n) return null;
  const { windows } = nestedWindows(h, interval);
  const scores: Array<[index: number, count: number]> = [];
  for (let y = 0; y < heldOut.length; y += 1) {
    if (!(heldOut[y] > 0)) continue;
    const index = windows.findIndex(([a, b]) => a <= y && y <= b);
    scores.push([index === -1 ? Infinity : index, heldOut[y]]);
  }
  scores.sort((x, y) => x[0] - y[0]);
  let seen = 0;
  for (const [index, count] of scores) {
    seen += count;
    if (seen >= rank) {
      if (!Number.isFinite(index)) return null;
      const [a, b] = windows[index];
      return { early: interval[0] - a, late: b - interval[1] };
    }
  }
  return null;
}
