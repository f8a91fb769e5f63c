// Recent change in an area's transit, and when a recent delivery is old enough to count as mature
// (docs/recent-shifts.md). Pure: the caller passes the area's long-run
// transit distribution and its recent deliveries, each with how long ago it was dispatched.
//
// Why a likelihood and not a comparison of medians: the recent deliveries of a slowed area are
// censored. Of the cards dispatched a week ago only those that took at most a week are delivered,
// so the recent deliveries look faster than the area really is (the slowest are still on their
// way), and a shift that began a few weeks ago is hidden by exactly the cards it delays. Here each
// recent delivery is read as what it is: a transit y observed because y ≤ A, A the business days
// from its dispatch to today. Under the long-run distribution q moved by s days its probability is
// q_s(y) / Q_s(A) (Q_s the cumulative), so a delivery of an immature dispatch is evidence too, about
// the part of the distribution it could reach. The shift is a step: dispatches of the last c days
// are s days slower (s < 0: faster), older ones are not; c and s are chosen by likelihood, and the
// evidence is twice the log-likelihood ratio against no change.
import { binomialUpperTail, normalise, quantile, type Histogram } from './statistics.js';

/**
 * Recent deliveries of a level as the statistics read them: [calendar days from dispatch to today,
 * transit in business days, count, how many of them an issuer recorded (the rest imported; 0 when
 * not given)].
 */
export type RecentCounts = ReadonlyArray<readonly [sinceDays: number, transit: number, count: number, byIssuers?: number]>;

/**
 * The service's own registrations of a level still on their way: [calendar days from dispatch to
 * today, how many]. Only dispatches registered promptly (so the service knew of them from the
 * start), live, not delivered, of the recent period, each issuer's up to its bound
 * (db/transit-statistics-sql.ts IN_FLIGHT).
 */
export type InFlightCounts = ReadonlyArray<readonly [sinceDays: number, count: number]>;

/** A group of recent deliveries of one area: same dispatch day and transit. */
export interface RecentDelivery {
  /** Calendar days from dispatch to today (0: dispatched today). */
  sinceDays: number;
  /**
   * Business days from the first business day on or after dispatch to today: the longest transit a
   * card of that dispatch can have and already be delivered.
   */
  observableDays: number;
  /** Transit, business days. */
  transit: number;
  count: number;
  /** How many of `count` an issuer recorded (the service's own deliveries); the rest were imported. */
  byIssuers?: number;
}

export interface RecentShift {
  /** Most likely shift, business days (negative: faster than the norm). */
  days: number;
  /** The shift applies to dispatches of the last this many calendar days. */
  sinceDays: number;
  /** Shifts the data cannot tell from `days` (likelihood interval, about 95 %), lowest and highest. */
  plausible: [number, number];
  /** Twice the log-likelihood ratio of the shift against no change. */
  evidence: number;
  /** Recent deliveries dispatched within the shift's span. */
  deliveries: number;
  /**
   * Whether the sign test (SIGN_P) confirmed it on enough of the span's deliveries old enough to
   * tell; a shift that only the youngest, censored dispatches show is at most suspected.
   */
  confirmed: boolean;
}

/**
 * The recent period (calendar days): dispatches of the last six weeks are not fitted. The shift
 * detector reads all their deliveries (a shift that began 5–35 days ago, with a week of the norm
 * before it), and those that are mature by the network's own speed join the held-out deliveries
 * (recent-change.ts). Older dispatches make the long-run histograms.
 */
export const RECENT_DAYS = 42;
/** Largest shift looked for, either way (business days). */
export const MAX_SHIFT_DAYS = 6;
/**
 * Evidence (2·log LR, maximised over change days and shifts: a scan statistic) above which a shift
 * is taken as detected, if the sign test confirms it. Its null distribution is far above the
 * single-test χ²₁ quantiles and is not read off them: it is simulated
 * (test/domain/recent-shift-calibration.unit.test.ts draws areas without change, of every shape,
 * volume and history size, with their noise, and measures how often each threshold is reached).
 */
export const SHIFT_EVIDENCE = 16;
/**
 * Evidence from which a shift is suspected (the window widened by a day, the level at most Medium):
 * the scan statistic's 99th percentile on areas without change, by that simulation, so that about
 * one unchanged area in a hundred is flagged at each level read.
 */
export const SUSPECT_EVIDENCE = 14;
/** 2·log LR within which another shift stays plausible (χ²₁ 95 %). */
export const PLAUSIBLE_RANGE = 3.84;
/** Fewest recent deliveries the shift's span would have delivered by now without it, for it to count. */
export const MIN_SHIFT_DELIVERIES = 5;
/**
 * A shift must also move its span's deliveries to its side of the norm's median more often than
 * the norm does (a sign test, ties at the median counted half, one-sided p ≤ SIGN_P): the likelihood
 * alone lets a minority of very late cards read as a shift. A single issuer may supply up to half
 * of an area's recent deliveries (docs/predictions.md "History and its bounds"), and all of them may
 * fall in the few days a shift's span holds, so the test is made on the span's deliveries without
 * the most telling ones any one issuer could have recorded (signTest).
 */
export const SIGN_P = 0.01;
/** Weight of a flat floor mixed into the norm: a transit the norm never saw must not be impossible. */
const FLOOR_WEIGHT = 0.01;

/** log q_s(y) and Q_s(A) of the norm moved by s days (Y = max(0, X + s)), over a shared floor. */
function shiftedNorm(norm: Histogram, s: number): { logPmf: (y: number) => number; cdf: (a: number) => number } {
  const q = normalise(norm);
  const span = q.length + MAX_SHIFT_DAYS + 1;
  const floor = FLOOR_WEIGHT / span;
  const pmf = Array.from({ length: span + MAX_SHIFT_DAYS }, () => 0);
  q.forEach((p, x) => (pmf[Math.min(pmf.length - 1, Math.max(0, x + s))] += (1 - FLOOR_WEIGHT) * p));
  for (let y = 0; y < span; y += 1) pmf[y] += floor;
  const cumulative: number[] = [];
  pmf.reduce((sum, p, y) => (cumulative[y] = sum + p), 0);
  return {
    logPmf: (y) => Math.log(y < pmf.length ? Math.max(pmf[y], floor) : floor),
    cdf: (a) => (a < 0 ? 0 : cumulative[Math.min(a, cumulative.length - 1)]),
  };
}

/** A day of the recent period on which cards may have been dispatched. */
export interface DispatchDay {
  sinceDays: number;
  observableDays: number;
  /**
   * The same, counted to the last day the imported history holds (its export), where that is
   * earlier: an import stops there, while the service's own deliveries go on to yesterday, so an
   * imported card of a dispatch just before the export is read as seen because it arrived by then.
   * Absent: `observableDays`.
   */
  importedObservableDays?: number;
}

/**
 * The most likely step shift in the recent deliveries against the norm, or null when there are no
 * recent deliveries (or no norm). `days` are the recent period's dispatch days. The caller decides
 * what evidence is enough (SHIFT_EVIDENCE, SUSPECT_EVIDENCE); `evidence` is 0 when no shift
 * explains the data better than none.
 *
 * The evidence of imported deliveries is which transits they took, each read as observed because
 * it was at most its dispatch's observable days (q_s(y) / Q_s(A)). Not how many were delivered: an
 * import holds the cards that arrived, not how many were sent (its volume follows weekdays,
 * seasons, holidays and the day it was exported), so a count of the fast cards that did not arrive
 * reads an ordinary dip in volume as a slowdown (bench/prediction-quality/README.md, issue 29).
 * Where the service knows how many were sent, its own registrations (`inFlight`, and the recent
 * deliveries its issuers recorded, `byIssuers`), the count is evidence too: a card registered
 * at dispatch and not delivered after the area's usual transit is a censored transit, and a
 * slowdown younger than the transit shows in those cards before any of them arrives.
 */
export function recentShift(
  norm: Histogram,
  recent: readonly RecentDelivery[],
  days: readonly DispatchDay[],
  inFlight: InFlightCounts = [],
): RecentShift | null {
  const groups = recent.filter((r) => r.count > 0 && r.transit <= r.observableDays);
  const flying = new Map<number, number>();
  for (const [sinceDays, count] of inFlight) if (count > 0) flying.set(sinceDays, (flying.get(sinceDays) ?? 0) + count);
  if ((groups.length === 0 && flying.size === 0) || !norm.some((p) => p > 0)) return null;
  const shifts = Array.from({ length: 2 * MAX_SHIFT_DAYS + 1 }, (_, i) => i - MAX_SHIFT_DAYS);
  const none = shifts.indexOf(0);
  const models = shifts.map((s) => shiftedNorm(norm, s));
  // By dispatch day, newest first: a change day c puts every day with sinceDays ≤ c in the step.
  const ordered = [...days].sort((a, b) => a.sinceDays - b.sinceDays);
  const perDay = ordered.map((day) => {
    const own = groups.filter((g) => g.sinceDays === day.sinceDays);
    const stillOnTheirWay = day.observableDays >= 0 ? (flying.get(day.sinceDays) ?? 0) : 0;
    return {
      day,
      count: own.reduce((n, g) => n + g.count, 0) + stillOnTheirWay,
      logPmf: models.map((m) => own.reduce((sum, g) => sum + g.count * m.logPmf(g.transit), 0)),
      // Imported deliveries are read as seen because they arrived by the cut (q_s(y)/Q_s(A), the
      // import's own cut: recent-change.ts shiftPeriod). The service's own are not divided: it knows
      // how many it registered, so those still on their way say how many did not arrive by the cut,
      // each a transit longer than A: 1 − Q_s(A). (A card delivered today is in neither count: its
      // transit is past the cut, its dispatch no longer on its way.)
      truncation: models.map((m) => own.reduce((sum, g) => sum + (g.count - (g.byIssuers ?? 0)) * Math.log(Math.max(m.cdf(g.observableDays), 1e-12)), 0)), // prettier-ignore
      onTheirWay: models.map((m) => stillOnTheirWay * Math.log(Math.max(1 - m.cdf(day.observableDays), 1e-12))),
      // The imported deliveries alone (othersAgree).
      imported: own.reduce((n, g) => n + g.count - (g.byIssuers ?? 0), 0),
      importedLogLikelihood: models.map(
        (m) =>
        own.reduce((sum, g) => sum + (g.count - (g.byIssuers ?? 0)) * (m.logPmf(g.transit) - Math.log(Math.max(m.cdf(g.observableDays), 1e-12))), 0), // prettier-ignore
      ),
    };
  });
  // Per shift, the log-likelihood of the step's cards so far: the imported deliveries each read as
  // seen because its transit fits its dispatch's observable days (Σ log q_s(y) − Σ_days
  // n_day·log Q_s(A_day)), the service's own in full, delivered or still on their way.
  const inStep = shifts.map(() => 0);
  let best: { gain: number; day: number; shift: number; deliveries: number } | null = null;
  // Each shift's best gain over the change days: a shift is plausible if some start makes it so.
  const profile = shifts.map(() => -Infinity);
  let deliveries = 0;
  for (const d of perDay) {
    deliveries += d.count;
    if (d.count > 0) for (let k = 0; k < shifts.length; k += 1) inStep[k] += d.logPmf[k] - d.truncation[k] + d.onTheirWay[k];
    // Enough of the step's cards delivered to read it.
    if (deliveries < MIN_SHIFT_DELIVERIES) continue;
    const gains = shifts.map((_, k) => inStep[k] - inStep[none]);
    for (let k = 0; k < shifts.length; k += 1) {
      profile[k] = Math.max(profile[k], gains[k]);
      if (k !== none && (best === null || gains[k] > best.gain))
        best = { gain: gains[k], day: d.day.sinceDays, shift: shifts[k], deliveries };
    }
  }
  const nothing = (n: number): RecentShift => ({ days: 0, sinceDays: 0, plausible: [0, 0], evidence: 0, deliveries: n, confirmed: false });
  if (best === null || best.gain <= 0) return nothing(best?.deliveries ?? 0);
  const found = best;
  const sign = signTest(
    norm,
    groups.filter((g) => g.sinceDays <= found.day),
    found.shift,
    Math.floor(recent.reduce((n, r) => n + r.count, 0) / 2),
  );
  if (sign === 'fails') return nothing(found.deliveries);
  // Too young for the sign test, the issuers' cards (their deliveries and registrations on their
  // way) may be all the step has; but where the span's imported deliveries are enough to read, they
  // must not prefer no change to the shift: one issuer's cards alone never outweigh them.
  const span = perDay.filter((d) => d.day.sinceDays <= found.day);
  const k = shifts.indexOf(found.shift);
  const importedGain = span.reduce((sum, d) => sum + d.importedLogLikelihood[k] - d.importedLogLikelihood[none], 0);
  if (sign === 'untested' && span.reduce((n, d) => n + d.imported, 0) >= MIN_SHIFT_DELIVERIES && importedGain < 0)
    return nothing(found.deliveries);
  const plausible = shifts.filter((_, k) => k !== none && 2 * (found.gain - profile[k]) <= PLAUSIBLE_RANGE);
  return {
    days: found.shift,
    sinceDays: found.day,
    plausible: [Math.min(...plausible), Math.max(...plausible)],
    evidence: 2 * found.gain,
    deliveries: found.deliveries,
    confirmed: sign === 'holds',
  };
}

/**
 * The sign test of SIGN_P: of the span's deliveries whose dispatch is old enough for the question
 * not to be censored (at least the norm's 95th percentile plus the shift, in business days; for a
 * slowdown, also every dispatch that could show it, below), those
 * beyond the norm's median on the shift's side (at the median counting half), against the share the
 * norm itself puts there, at least a half. 'untested' when fewer than MIN_SHIFT_DELIVERIES are old
 * enough.
 *
 * One issuer's deliveries never decide it (docs/predictions.md "History and its bounds"): an issuer
 * counts for at most `issuerBound` of the level's recent deliveries (half of them, the SQL's cap),
 * but nothing stops all of those falling in the span and on the shift's side. So the test is made
 * without the issuers' deliveries (byIssuers) that score highest, up to `issuerBound` of them: what
 * is left is what the other sources show whichever issuer recorded them. Where enough were old
 * enough to tell but too few are left without them, the other sources show no shift: 'fails'.
 */
function signTest(norm: Histogram, step: readonly RecentDelivery[], shift: number, issuerBound: number): 'holds' | 'fails' | 'untested' {
  const q = normalise(norm);
  const median = quantile(q, 0.5) ?? 0;
  const score = (y: number) => ((shift > 0 ? y > median : y < median) ? 1 : y === median ? 0.5 : 0);
  const expected = Math.max(
    0.5,
    q.reduce((sum, p, y) => sum + p * score(y), 0),
  );
  /** The test on the step's deliveries from dispatches at least `oldEnough` business days old. */
  const test = (oldEnough: number): 'holds' | 'fails' | 'untested' => {
    const told = step.filter((g) => g.observableDays >= oldEnough);
    let n = told.reduce((sum, g) => sum + g.count, 0);
    if (n < MIN_SHIFT_DELIVERIES) return 'untested';
    let k = told.reduce((sum, g) => sum + g.count * score(g.transit), 0);
    let left = issuerBound;
    for (const g of [...told].sort((a, b) => score(b.transit) - score(a.transit))) {
      const taken = Math.min(left, g.byIssuers ?? 0);
      if (taken <= 0 || score(g.transit) === 0) continue;
      n -= taken;
      k -= taken * score(g.transit);
      left -= taken;
    }
    if (n < MIN_SHIFT_DELIVERIES) return 'fails';
    return binomialUpperTail(Math.round(n), Math.ceil(k), expected) <= SIGN_P ? 'holds' : 'fails';
  };
  // Dispatches old enough for nearly all their cards (the norm's 95th percentile, plus the shift).
  const uncensored = test((quantile(q, 0.95) ?? 0) + Math.max(0, shift));
  if (shift <= 0 || uncensored === 'holds') return uncensored;
  // For a slowdown, censoring hides only cards of its own side of the median, so the test on every
  // dispatch that could show a card past the median by the shift is the harder to pass: where it
  // holds, the slowdown holds (two tests: at most 2·SIGN_P without change); where it fails, the
  // missing cards may be why, and the uncensored test decides.
  return test(median + shift + 1) === 'holds' ? 'holds' : uncensored;
}

/**
 * Whether a recent delivery is mature: its dispatch is at least `p99` business days old, `p99` the
 * 99th-percentile transit of the country (or of the area, where that is slower). Of a dispatch that
 * old at most ~1 % of the cards are still on their way, so its delivered cards are an unbiased
 * sample of transit; younger dispatches are censored and are read by recentShift only.
 */
export function isMature(delivery: Pick<RecentDelivery, 'observableDays'>, p99: number): boolean {
  return delivery.observableDays >= p99;
}
