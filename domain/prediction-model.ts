// The history-based delivery window (docs/predictions.md): the drop-in upgrade of the
// foundation's `predict` (domain/prediction.ts). Pure: the caller passes today and the statistics
// that db/transit-statistics.ts `loadTransitStatistics` reads; nothing here reads a clock or a database.
//
// How a window is made for a card on its way (dispatched, in transit):
// 1. Levels: the destination's postal code, its postal prefix (postalPrefixOf) and its country, each
//    with a histogram of transit times in business days of the country. A country with fewer than
//    MIN_COUNTRY_HISTORY deliveries has no usable history: the foundation's default table answers,
//    moved by a declared delay like any other window (step 5).
// 2. Shrinkage: the predictive distribution is Bayesian, a Dirichlet prior centred on the parent level
//    with the weight of κ deliveries: p_prefix = (h_prefix + κ_p·p_country) / (n_prefix + κ_p),
//    p_code = (h_code + κ_c·p_prefix) / (n_code + κ_c). κ is estimated from the country's own data
//    (empirical Bayes, Bühlmann–Straub credibility, priorStrengths): the noise within a postal code
//    over the spread between areas. Where prefixes differ a lot, a prefix with 20 deliveries is
//    mostly itself; where they are alike, it is mostly its country. No hard cut-off between levels.
//    The parent's distribution pools its areas by volume, so it carries the spread between its busy
//    areas only; step 4 adds the spread between areas that a sparse or new code's history leaves open.
// 3. Confidence first, from how well the data pin the window down (prediction-levels.ts
//    confidenceFor): the postal code's own deliveries, the spread of its predictive distribution,
//    whether a recent shift is uncertain or a delay declared, and whether any level holds enough
//    held-out deliveries to calibrate the level's target. The level decides the target, so it
//    comes before the window.
// 4. The window is the shortest interval holding TARGET_COVERAGE[confidence] (High 97 %, Medium
//    92 %, Low 85 %) of the predictive distribution, with the spread between areas that the code's
//    own history has not resolved added to it (unresolvedAreaVariance: all of it for a code never
//    delivered to, since the prefix's pooled deliveries describe its busy codes, not a new one;
//    almost none for a well-known code), then corrected split-conformally: the model is fitted on
//    the older 75 % of each level's history; the most specific level with enough held-out (most
//    recent 25 %, and the mature recent ones of step 5) deliveries for the target (calibrationSizeFor)
//    scores them against the interval the same model gives that level, and the correction that
//    makes that level's interval meet the target is applied to the window.
// 5. Recent change (recent-change.ts): the recent deliveries (dispatches of the last RECENT_DAYS,
//    which the histograms leave out) are read for a shift of the code, its prefix or its country
//    against its fitted norm, censoring included (recent-shift.ts); a detected shift moves the
//    window, an uncertain one lowers the level too. The recent deliveries that are mature by the
//    country's p99 transit join the held-out ones, so calibration follows the network as it is now.
//    An operator-declared delay of N days moves the window N later and, since N is an estimate,
//    widens each end by ⌈N·DECLARED_DELAY_UNCERTAINTY⌉, whether the window comes from history or from
//    the default table (docs/predictions.md "Conditions").
// 6. Status narrowing (delivered, out for delivery, exception) is the foundation's, unchanged.
import { addBusinessDays, businessDayOnOrAfter, laterDate, utcDateOf } from './calendar.js';
import { conformalEnds } from './conformal-window.js';
import { recentChange, withMatureRecent } from './recent-change.js';
import type { InFlightCounts, RecentCounts } from './recent-shift.js';
export { RECENT_DAYS } from './recent-shift.js';
import { LOW_CONFIDENCE_EXTRA_DAYS, notInThePast, predict, transitRangeFor, type Prediction, type PredictionInput } from './prediction.js';
import { calibrationSizeFor, confidenceFor, spreadOf, TARGET_COVERAGE } from './prediction-levels.js';
import type { ConfidenceLevel } from './vocabulary.js';
import {
  addNormalNoise,
  combine,
  normalise,
  shortestInterval,
  total,
  varianceComponents,
  type AreaMoments,
  type Histogram,
} from './statistics.js';

/** One level's history, as loadTransitStatistics returns it. */
export interface LevelStatistics {
  /**
   * Deliveries per transit time (index = business days) in the older 75 % of the level's long-run
   * history (dispatches at least RECENT_DAYS old).
   */
  fit: Histogram;
  /** The same for the most recent 25 %, held out to calibrate the window. */
  calibration: Histogram;
  /**
   * Deliveries (so far) of the dispatches of the last RECENT_DAYS: read by the shift detector, and
   * added to the held-out deliveries once mature (recent-change.ts).
   */
  recent: RecentCounts;
  /**
   * The service's own registrations of the level still on their way, by days since dispatch
   * (db/transit-statistics-sql.ts IN_FLIGHT): read by the shift detector with its count of how many
   * were sent. Absent: none known (a history without the service, or the country's level).
   */
  inFlight?: InFlightCounts;
}

/** An operator-declared delay (`conditions set`), not cleared. */
export interface OperatorDelay {
  /** Null: the whole country. */
  postalPrefix: string | null;
  delayDays: number;
  /** Last day it applies (YYYY-MM-DD, inclusive); null: until cleared. */
  until: string | null;
}

export interface TransitStatistics {
  postalCode: LevelStatistics;
  postalPrefix: LevelStatistics;
  country: LevelStatistics;
  /** The country's operator delays, country-wide or for any prefix (the model picks those that apply). */
  operatorDelays: OperatorDelay[];
  /**
   * The country's mature deliveries summed by postal code and prefix (transit capped at
   * MOMENT_CAP_DAYS), for the shrinkage weights; null when it has none.
   */
  areaMoments: AreaMoments | null;
}

/** Weight, in deliveries, of the parent level's distribution when the country cannot estimate it. */
export const DEFAULT_PRIOR_STRENGTH = 20;
/**
 * Bounds of the estimated weight: at least 2 deliveries' worth (a single delivery never decides a
 * window alone), at most 200 (an area with 200 deliveries is at least half itself, even where the
 * estimate says areas are alike: a mean-based estimate does not see differences of shape).
 */
export const MIN_PRIOR_STRENGTH = 2;
export const MAX_PRIOR_STRENGTH = 200;
/** Transit is capped at this many business days in the moments: one lost card must not set the variances. */
export const MOMENT_CAP_DAYS = 15;
/** A declared delay of N days is taken to be uncertain by about N/3 either way (at least a day). */
export const DECLARED_DELAY_UNCERTAINTY = 1 / 3;
/** A country needs this many deliveries before its history replaces the default table. */
export const MIN_COUNTRY_HISTORY = 30;

/**
 * The postal prefix of a (normalised) postal code, the middle level of the model: the outward code
 * for GB ("SW1A" of "SW1A 1AA"), the first 3 characters for US (ZIP3: the sectional centre that
 * sorts the mail), CA (forward sortation area) and IE (Eircode routing key), and elsewhere the first
 * 2 (the département in FR, Leitregion in DE, province in ES and IT, region in NL, BE, AT, …).
 */
export function postalPrefixOf(postalCode: string, countryCode: string): string {
  const code = [...normalisePostalCode(postalCode, countryCode)];
  switch (countryCode.toUpperCase()) {
    case 'GB':
      // The inward code is always three characters: what precedes it is the outward code.
      return (code.length > 3 ? code.slice(0, -3) : code).join('');
    case 'US':
    case 'CA':
    case 'IE':
      return code.slice(0, 3).join('');
    default:
      return code.slice(0, 2).join('');
  }
}

/**
 * Upper case without spaces or dashes, and a US ZIP+4 cut to its ZIP, so "sw1a 1aa" = "SW1A1AA".
 * Cut by characters (code points), as the prefix is: the API takes any string, and a cut between
 * the two halves of a character outside the BMP would leave half of it, which Postgres stores as
 * U+FFFD.
 */
export function normalisePostalCode(postalCode: string, countryCode: string): string {
  const code = postalCode.toUpperCase().replace(/[\s-]/g, '');
  return countryCode.toUpperCase() === 'US' ? [...code].slice(0, 5).join('') : code;
}

/**
 * The weight κ of the parent's distribution at each level, by credibility theory (Bühlmann–Straub):
 * κ = (variance of one delivery around its area's mean) / (variance of areas' means around the
 * parent's), estimated from the country's own data (statistics.ts varianceComponents). A prefix's
 * deliveries vary with the noise and the spread of its codes, so both count for it.
 */
export function priorStrengths(moments: AreaMoments | null): { prefix: number; code: number } {
  const v = moments ? varianceComponents(moments) : null;
  const clamp = (k: number) => Math.min(MAX_PRIOR_STRENGTH, Math.max(MIN_PRIOR_STRENGTH, Number.isNaN(k) ? DEFAULT_PRIOR_STRENGTH : k));
  return {
    code: v?.betweenCodes == null ? DEFAULT_PRIOR_STRENGTH : clamp(v.withinCode / v.betweenCodes),
    prefix: v?.betweenPrefixes == null ? DEFAULT_PRIOR_STRENGTH : clamp((v.withinCode + (v.betweenCodes ?? 0)) / v.betweenPrefixes),
  };
}

/**
 * Variance (business days²) of the postal code's own effect that its history has not pinned down
 * (step 4): a code's mean is its prefix's plus an effect of variance τ_c² between codes, a prefix's
 * its country's plus one of τ_p²; credibility z = n/(n + κ) is the share of it the code's (or
 * prefix's) own fitted deliveries resolve. A code with no history keeps all of τ_c² (and the part of
 * τ_p² its prefix leaves): its prefix's distribution, pooled by volume, describes the prefix's busy
 * codes, not a new one, which may sit anywhere in the spread between codes. 0 for a well-known code,
 * and where the country cannot estimate the spread.
 */
export function unresolvedAreaVariance(stats: TransitStatistics): number {
  const v = stats.areaMoments ? varianceComponents(stats.areaMoments) : null;
  if (!v) return 0;
  const strength = priorStrengths(stats.areaMoments);
  const unresolved = (own: Histogram, k: number) => k / (total(own) + k);
  const prefixPart = unresolved(stats.postalPrefix.fit, strength.prefix) * (v.betweenPrefixes ?? 0);
  return unresolved(stats.postalCode.fit, strength.code) * ((v.betweenCodes ?? 0) + prefixPart);
}

/** Each level's predictive distribution, fitted on its older 75 % and shrunk toward its parent (step 2). */
export function levelPredictives(stats: TransitStatistics): { country: number[]; prefix: number[]; code: number[] } {
  const strength = priorStrengths(stats.areaMoments);
  const country = normalise(stats.country.fit);
  const prefix = shrink(stats.postalPrefix.fit, country, strength.prefix);
  return { country, prefix, code: shrink(stats.postalCode.fit, prefix, strength.code) };
}

/** The shrunk predictive distribution of transit times for the postal code (step 2). */
export function predictiveDistribution(stats: TransitStatistics): number[] {
  return levelPredictives(stats).code;
}

function shrink(own: Histogram, parent: Histogram, strength: number): number[] {
  const n = total(own);
  return combine(own, 1 / (n + strength), parent, strength / (n + strength));
}

/** Carrier conditions that bear on the confidence: an uncertain recent shift, a declared delay (business days). */
export interface Conditions {
  uncertainShift: boolean;
  declaredDelayDays: number;
}

/**
 * The window in business days from the first business day on or after dispatch (steps 3–4): the
 * confidence first, then the window at that confidence's target.
 */
export function transitDays(
  stats: TransitStatistics,
  conditions: Conditions = { uncertainShift: false, declaredDelayDays: 0 },
): { days: [number, number]; confidence: ConfidenceLevel } {
  const confidence = confidenceFor({
    postalCodeHistory: total(stats.postalCode.fit) + total(stats.postalCode.calibration),
    spread: spreadOf(levelPredictives(stats).code),
    ...conditions,
    calibrationSize: Math.max(...[stats.postalCode, stats.postalPrefix, stats.country].map((level) => total(level.calibration))),
  });
  return { days: calibratedWindow(stats, TARGET_COVERAGE[confidence]), confidence };
}

/**
 * The postal code's window at `coverage`, in business days from the first business day on or after
 * dispatch (step 4): the shortest interval of its predictive distribution (with the unresolved
 * spread between areas) holding `coverage`, corrected split-conformally on the most specific level
 * with calibrationSizeFor(coverage) held-out deliveries; widened by a day each side when none has.
 */
export function calibratedWindow(stats: TransitStatistics, coverage: number): [number, number] {
  const predictives = levelPredictives(stats);
  // The code's interval carries the spread between areas its history leaves open (unresolvedAreaVariance).
  const [lo, hi] = shortestInterval(addNormalNoise(predictives.code, unresolvedAreaVariance(stats)), coverage);
  // Held-out deliveries are scored against their own level's interval, never another area's: a slow
  // prefix's window scored on the whole country's deliveries would be "corrected" toward the country.
  const needed = calibrationSizeFor(coverage);
  const calibration = (
    [
      [stats.postalCode, predictives.code],
      [stats.postalPrefix, predictives.prefix],
      [stats.country, predictives.country],
    ] as const
  ).find(([level]) => total(level.calibration) >= needed);
  // Each end moves by its own number of days (conformal-window.ts): misses are late, so the early
  // end is not widened for them. Without enough held-out deliveries (never for High, which
  // confidenceFor grants only where some level has enough) the interval is widened a day each side.
  const correction = (calibration && conformalEnds(calibration[1], shortestInterval(calibration[1], coverage), calibration[0].calibration, coverage)) ?? { early: 1, late: 1 }; // prettier-ignore
  const min = Math.max(0, lo - correction.early);
  return [min, Math.max(min, hi + correction.late)];
}

/** The largest operator delay in force today for the destination (country-wide or its prefix). */
export function operatorDelayDays(delays: readonly OperatorDelay[], postalPrefix: string, today: string): number {
  let days = 0;
  for (const delay of delays) {
    if (delay.until !== null && delay.until < today) continue;
    if (delay.postalPrefix !== null && delay.postalPrefix !== postalPrefix) continue;
    // Overlapping declarations describe the same disruption: the worst one counts, they do not add up.
    days = Math.max(days, delay.delayDays);
  }
  return days;
}

/**
 * The prediction for a dispatch from its destination's transit statistics; the foundation's table
 * when the country has too little history, moved by a declared delay all the same. Same input and
 * output as domain/prediction.ts `predict`.
 */
export function predictFromHistory(input: PredictionInput, stats: TransitStatistics | null): Prediction {
  const country = input.destination.country_code.toUpperCase();
  const foundation = predict(input);
  const countryHistory = stats ? total(stats.country.fit) + total(stats.country.calibration) : 0;
  const hasHistory = stats !== null && countryHistory >= MIN_COUNTRY_HISTORY && total(stats.country.fit) > 0;
  const declared = stats ? operatorDelayDays(stats.operatorDelays, postalPrefixOf(input.destination.postal_code, country), input.today) : 0; // prettier-ignore
  if (!hasHistory && declared === 0) return foundation;
  // Without history the window is the foundation's (its table, Low), with no recent change to read.
  let transit: { days: [number, number]; confidence: ConfidenceLevel; slowdown: { early: number; late: number } };
  if (hasHistory) {
    const predictives = levelPredictives(stats);
    const norms = { postalCode: predictives.code, postalPrefix: predictives.prefix, country: predictives.country };
    const change = recentChange(stats, norms, input.today, country);
    const calibrated = withMatureRecent(stats, norms, change, input.today, country);
    const slowdown = { early: change.early, late: change.late };
    transit = { ...transitDays(calibrated, { uncertainShift: change.uncertain, declaredDelayDays: declared }), slowdown };
  } else transit = { ...defaultTransitDays(country), slowdown: { early: 0, late: 0 } };
  switch (input.state.status) {
    case 'delivered':
    case 'out_for_delivery':
      return foundation;
    case 'exception': {
      // The foundation's exception window, never ending before the card could arrive in transit.
      const inTransit = inTransitPrediction(input, transit, declared, country);
      return { window: { min: foundation.window.min, max: laterDate(foundation.window.max, inTransit.window.max) }, confidence: 'Low' };
    }
    case 'dispatched':
    case 'in_transit':
      return inTransitPrediction(input, transit, declared, country);
  }
}

/** The foundation's window in business days (its table, widened as a Low window), for a country without usable history. */
function defaultTransitDays(country: string): { days: [number, number]; confidence: ConfidenceLevel } {
  const [min, max] = transitRangeFor(country);
  return { days: [min, max + LOW_CONFIDENCE_EXTRA_DAYS], confidence: 'Low' };
}

/** The window from the dispatch date: the transit days, moved by the slowdown and the declared delay (step 5). */
function inTransitPrediction(
  input: PredictionInput,
  transit: { days: [number, number]; confidence: ConfidenceLevel; slowdown: { early: number; late: number } },
  declared: number,
  country: string,
): Prediction {
  const { days, confidence, slowdown } = transit;
  const spread = Math.ceil(declared * DECLARED_DELAY_UNCERTAINTY);
  const start = businessDayOnOrAfter(utcDateOf(input.dispatchDate), country);
  const window = {
    min: addBusinessDays(start, Math.max(0, days[0] + slowdown.early + declared - spread), country),
    max: addBusinessDays(
      start,
      Math.max(0, days[0] + slowdown.early + declared - spread, days[1] + slowdown.late + declared + spread),
      country,
    ),
  };
  return { window: notInThePast(window, input.today, country), confidence };
}
