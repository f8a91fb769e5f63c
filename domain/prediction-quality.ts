// How good predicted delivery windows turned out (docs/prediction-quality.md "Quality"): for pairs of (window
// predicted at registration, actual delivery date), the share of deliveries inside the window and
// how wide the windows were, per confidence level beside the coverage the model states for it
// (TARGET_COVERAGE). Pure; shared by `predictions quality` (the service's own deliveries) and the
// carrier-network simulator (bench/prediction-quality), so both report the same figures.
import { businessDaysBetween, isBusinessDay } from './calendar.js';
import { TARGET_COVERAGE } from './prediction-levels.js';
import { NOT_LEARNED_REASONS, type ConfidenceLevel, type NotLearnedReason } from './vocabulary.js';

/**
 * Which day a delivery is judged on, as `predictions quality` and the dashboard's Prediction quality
 * page both state it (docs/prediction-quality.md "Quality"): the UTC date of the first delivered
 * event's `occurred_at`, whatever offset it was sent with, which is also the date the status record
 * shows once the card is delivered (domain/prediction.ts); calendar dates are compared, so a
 * Saturday delivery after a window that ends on a Friday is late.
 */
export const DELIVERED_ON_RULE =
  'Delivered on: the UTC date of the first delivered event the service received for the card, the date its status shows; inside when from the window’s first date to its last, both included.';

/** One dispatch: the window predicted when it was registered and the day it was delivered. */
export interface PredictionOutcome {
  countryCode: string;
  confidence: ConfidenceLevel;
  window: { min: string; max: string };
  deliveredDate: string;
}

/**
 * A delivered dispatch as the published accuracy keeps it (docs/prediction-quality.md): its outcome,
 * and whether the model learned from the delivery and, if not, why.
 */
export interface ReportedOutcome extends PredictionOutcome {
  learned: boolean;
  notLearned: readonly NotLearnedReason[];
}

/** How many of the report's deliveries the model did not learn from, and for each reason how many have it. */
export interface NotLearnedSummary {
  dispatches: number;
  reasons: Record<NotLearnedReason, number>;
}

export function notLearnedSummary(outcomes: readonly ReportedOutcome[]): NotLearnedSummary {
  const reasons = Object.fromEntries(NOT_LEARNED_REASONS.map((reason) => [reason, 0])) as Record<NotLearnedReason, number>;
  let dispatches = 0;
  for (const outcome of outcomes) {
    if (outcome.learned) continue;
    dispatches += 1;
    for (const reason of outcome.notLearned) reasons[reason] += 1;
  }
  return { dispatches, reasons };
}

export interface QualitySummary {
  dispatches: number;
  /** Delivered on a day inside the window (both ends included), before it, after it. */
  inside: number;
  early: number;
  late: number;
  /** inside / dispatches; null without dispatches. */
  coverage: number | null;
  /** 95 % Wilson score interval of the coverage, so a small sample's miss is not read as a verdict. */
  coverageInterval: [number, number] | null;
  /** Median number of business days (of the destination country) in the window, both ends included. */
  medianWindowDays: number | null;
}

export interface ConfidenceQuality extends QualitySummary {
  confidence: ConfidenceLevel;
  /** The coverage the model calibrates this level's windows to meet. */
  targetCoverage: number;
}

const LEVELS: readonly ConfidenceLevel[] = ['High', 'Medium', 'Low'];

/**
 * Business days in the window, both ends included: a one-day window is 1, Monday to Wednesday is 3.
 * Counted in business days because that is how the model builds windows: a window across a weekend
 * is not wider to a carrier.
 */
export function windowBusinessDays(window: { min: string; max: string }, countryCode: string): number {
  return businessDaysBetween(window.min, window.max, countryCode) + (isBusinessDay(window.min, countryCode) ? 1 : 0);
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** 95 % Wilson score interval of a proportion k/n. */
export function wilsonInterval(k: number, n: number): [number, number] | null {
  if (n === 0) return null;
  const z = 1.959964;
  const p = k / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

export function summariseOutcomes(outcomes: readonly PredictionOutcome[]): QualitySummary {
  let inside = 0;
  let early = 0;
  let late = 0;
  for (const { window, deliveredDate } of outcomes) {
    // YYYY-MM-DD dates compare correctly as strings.
    if (deliveredDate < window.min) early += 1;
    else if (deliveredDate > window.max) late += 1;
    else inside += 1;
  }
  const n = outcomes.length;
  return {
    dispatches: n,
    inside,
    early,
    late,
    coverage: n === 0 ? null : inside / n,
    coverageInterval: wilsonInterval(inside, n),
    medianWindowDays: median(outcomes.map((o) => windowBusinessDays(o.window, o.countryCode))),
  };
}

/**
 * How a level's measured coverage stands against its target: `met` when the coverage reaches it,
 * `within_noise` when it does not but the target lies inside the 95 % interval (too few dispatches
 * to tell), `missed` when the whole interval is below it; null without dispatches.
 */
export type TargetVerdict = 'met' | 'within_noise' | 'missed';

export function targetVerdict(row: Pick<ConfidenceQuality, 'coverage' | 'coverageInterval' | 'targetCoverage'>): TargetVerdict | null {
  if (row.coverage === null || row.coverageInterval === null) return null;
  if (row.coverage >= row.targetCoverage) return 'met';
  return row.coverageInterval[1] >= row.targetCoverage ? 'within_noise' : 'missed';
}

/**
 * A share (a coverage, an end of its interval) as it is printed with `decimals` decimals (4 in
 * `--json`, 3 as a percentage with one): rounded to the nearest, except that a share below the
 * level's target never prints as reaching it (226 of 233 inside, 0.969957, is 0.9699 beside a
 * target of 0.97, not 0.97): the printed figures then say what the verdict says.
 */
export function publishedShare(value: number, targetCoverage: number, decimals: number): number {
  const scale = 10 ** decimals;
  const rounded = Math.round(value * scale) / scale;
  return value < targetCoverage && rounded >= targetCoverage ? (Math.round(targetCoverage * scale) - 1) / scale : rounded;
}

/** One row per confidence level (High, Medium, Low), each beside its target coverage (High 97 %, Medium 92 %, Low 85 %). */
export function qualityByConfidence(outcomes: readonly PredictionOutcome[]): ConfidenceQuality[] {
  return LEVELS.map((confidence) => ({
    confidence,
    targetCoverage: TARGET_COVERAGE[confidence],
    ...summariseOutcomes(outcomes.filter((o) => o.confidence === confidence)),
  }));
}
