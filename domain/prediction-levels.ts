// The confidence levels and what each promises (docs/predictions.md "Calibration", "Confidence
// levels"): the coverage target of each level, the rules that give a window its level from how well
// the data pin it down, and how many held-out deliveries calibrating a target needs. Pure. The
// model (domain/prediction-model.ts) decides the level first, then makes the window at its target.
import type { ConfidenceLevel } from './vocabulary.js';
import { quantile, type Histogram } from './statistics.js';

/**
 * Coverage each confidence level's window is calibrated to meet (docs/predictions.md "Calibration"):
 * the share of actual deliveries inside the window. A cardholder reads High as "almost certainly in
 * this window", so High promises the most; Low says the estimate is less certain, and its window
 * is the narrowest promise the data support, not a wider one that is always right.
 */
export const TARGET_COVERAGE: Readonly<Record<ConfidenceLevel, number>> = { High: 0.97, Medium: 0.92, Low: 0.85 };
/**
 * Held-out deliveries needed at a level before it calibrates the window, whatever the target; a
 * higher target needs more (calibrationSizeFor).
 */
export const MIN_CALIBRATION = 20;
/**
 * ...and at least this many of them expected outside the window (n·(1 − coverage)): at 97 % with
 * 50 held-out deliveries the conformal rank is the largest score, so one late card sets the window
 * (a 13-day window where 7 holds 97 %, on the benchmark's network); with 100, the third largest.
 */
export const EXPECTED_CALIBRATION_MISSES = 3;
/** Postal-code deliveries (fit + held out) for Medium, then High confidence... */
export const MEDIUM_MIN_HISTORY = 10;
export const HIGH_MIN_HISTORY = 50;
/** ...provided the 10th–90th percentile spread of the prediction is at most this many business days. */
export const MEDIUM_MAX_SPREAD = 5;
export const HIGH_MAX_SPREAD = 3;
/**
 * The fewest held-out deliveries for which split-conformal calibration at `coverage` exists: the
 * correction is the ⌈(n + 1)·coverage⌉-th smallest of n scores, so n must reach that rank
 * (conformal-window.ts conformalEnds). 6 for 85 %, 12 for 92 %, 33 for 97 %.
 */
export function minConformalSize(coverage: number): number {
  let n = 1;
  while (Math.ceil((n + 1) * coverage) > n) n += 1;
  return n;
}

/**
 * Held-out deliveries a level needs to calibrate a window at `coverage`: MIN_CALIBRATION, or more
 * where the finite-sample rank needs it (33 for High's 97 %: with 32 the rank is 33, beyond the
 * sample). A level with fewer leaves calibration to its parent; when no level has enough for 97 %,
 * High is not granted (confidenceFor), since its window could not be shown to hold 97 %.
 */
export function calibrationSizeFor(coverage: number): number {
  return Math.max(MIN_CALIBRATION, minConformalSize(coverage), Math.ceil(EXPECTED_CALIBRATION_MISSES / (1 - coverage) - 1e-9));
}

/** What the confidence is decided from (step 3): how well the data pin the window down. */
export interface ConfidenceSignals {
  /** Deliveries to the postal code (fitted and held out). */
  postalCodeHistory: number;
  /** 10th–90th percentile spread of the code's predictive distribution, business days. */
  spread: number;
  /**
   * A recent shift of the area that the model could not pin to one size, or only suspects
   * (recent-change.ts): its window moves by a guess.
   */
  uncertainShift: boolean;
  /** Business days of delay an operator declared for the destination (operatorDelayDays). */
  declaredDelayDays: number;
  /** Held-out deliveries of the largest level (code, prefix or country): what calibration can use. */
  calibrationSize: number;
}

/**
 * The confidence level (docs/predictions.md "Confidence levels"):
 * - High: ≥ HIGH_MIN_HISTORY deliveries to the code, spread ≤ HIGH_MAX_SPREAD, no uncertain recent
 *   shift, no declared delay, and enough held-out deliveries somewhere to calibrate 97 %. A shift
 *   pinned to one size moves the window and leaves the level alone.
 * - Medium: ≥ MEDIUM_MIN_HISTORY deliveries, spread ≤ MEDIUM_MAX_SPREAD, no declared delay (an
 *   uncertain shift is measured by the area's own recent deliveries, so it caps at Medium).
 * - Low otherwise: a new or sparse code, a wide spread, or a declared delay (its size is the
 *   operator's estimate, which no history can calibrate).
 * Monotone: more deliveries (or held-out ones) with the same spread and conditions never lower it.
 */
export function confidenceFor(signals: ConfidenceSignals): ConfidenceLevel {
  const { postalCodeHistory, spread, uncertainShift, declaredDelayDays: declared, calibrationSize } = signals;
  if (declared > 0) return 'Low';
  const disrupted = uncertainShift;
  const canCalibrateHigh = calibrationSize >= calibrationSizeFor(TARGET_COVERAGE.High);
  if (!disrupted && canCalibrateHigh && postalCodeHistory >= HIGH_MIN_HISTORY && spread <= HIGH_MAX_SPREAD) return 'High';
  if (postalCodeHistory >= MEDIUM_MIN_HISTORY && spread <= MEDIUM_MAX_SPREAD) return 'Medium';
  return 'Low';
}

/** 10th–90th percentile spread of a predictive distribution, in business days (Infinity when empty). */
export function spreadOf(predictive: Histogram): number {
  return (quantile(predictive, 0.9) ?? Infinity) - (quantile(predictive, 0.1) ?? 0);
}
