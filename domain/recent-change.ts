// What a destination's recent deliveries say (docs/recent-shifts.md):
// whether its area's transit shifted in the last weeks (recent-shift.ts, read on the postal code,
// then its prefix: the first that shows a shift), by how much the window moves
// and whether the level must drop for it; and the held-out deliveries the window is calibrated on,
// with the recent ones that are mature by the network's own speed added as the newest of them.
// Pure: the caller passes today and the destination's country.
import { addBusinessDays, businessDayOnOrAfter, businessDaysBetween } from './calendar.js';
import {
  isMature,
  RECENT_DAYS,
  recentShift,
  SHIFT_EVIDENCE,
  SUSPECT_EVIDENCE,
  type DispatchDay,
  type InFlightCounts,
  type RecentCounts,
  type RecentDelivery,
  type RecentShift,
} from './recent-shift.js';
import { quantile, type Histogram } from './statistics.js';

/** The percentile of transit past which a recent dispatch counts as mature (recent-shift.ts isMature). */
export const MATURITY_QUANTILE = 0.99;

export type LevelName = 'postalCode' | 'postalPrefix' | 'country';
/** What is read here of each level of domain/prediction-model.ts TransitStatistics. */
export interface RecentLevel {
  calibration: Histogram;
  recent: RecentCounts;
  /** The service's own registrations still on their way (absent: none known). */
  inFlight?: InFlightCounts;
}
const LEVELS: readonly LevelName[] = ['postalCode', 'postalPrefix', 'country'];
/**
 * The levels read for a shift: an area's, not the country's. A shift of a few prefixes blurs the
 * country's recent deliveries into a mixture that no single shift fits, and read there it moved (or
 * lowered) every window of the country for it; a country-wide change shows in each prefix.
 */
const AREAS: readonly LevelName[] = ['postalCode', 'postalPrefix'];

/** How the recent change bears on the window and its level. */
export interface RecentChange {
  /** Business days the window's start and end move (negative: earlier). */
  early: number;
  late: number;
  /** A shift detected but not pinned to one size, or only suspected: the level is at most Medium. */
  uncertain: boolean;
  /** The shift read, and on which level; null when none. */
  shift: (RecentShift & { level: LevelName; detected: boolean }) | null;
}

/**
 * The recent period's dispatch days (RECENT_DAYS of them, today first) with the business days a
 * card of each could have taken and be known delivered: counted to `reportedUntil`, yesterday by
 * default, since today's deliveries are still coming in (a delivery known today counts only if its
 * transit fits by then, so every day is read with the same cut). Null: nothing is reported yet.
 */
export function recentPeriod(
  today: string,
  country: string,
  reportedUntil: string | null = dayBefore(today),
  importedUntil: string | null = reportedUntil,
): DispatchDay[] {
  const todayMs = Date.parse(`${today}T00:00:00Z`);
  const observable = (start: string, until: string | null) => (until === null || start > until ? -1 : businessDaysBetween(start, until, country)); // prettier-ignore
  return Array.from({ length: RECENT_DAYS }, (_, sinceDays) => {
    const dispatched = new Date(todayMs - sinceDays * 86_400_000);
    const start = businessDayOnOrAfter(dispatched.toISOString().slice(0, 10), country);
    const observableDays = observable(start, reportedUntil);
    return importedUntil === reportedUntil
      ? { sinceDays, observableDays }
      : { sinceDays, observableDays, importedObservableDays: observable(start, importedUntil) };
  });
}

/**
 * The recent period as the shift detector reads a country's history: cut at the last day it
 * reports (reportedUntil), or yesterday where the service has cards of the area on their way (it
 * is live: it knows today which of its cards arrived); and its imported deliveries at the last day
 * the import holds, where the service's own deliveries go on past the export.
 */
export function shiftPeriod(countryRecent: RecentCounts, today: string, country: string, inFlight = false): DispatchDay[] {
  const imported = countryRecent.filter(([, , count, byIssuers = 0]) => count > byIssuers);
  const cut = inFlight ? dayBefore(today) : reportedUntil(countryRecent, today, country);
  return recentPeriod(today, country, cut, reportedUntil(imported, today, country));
}

const dayBefore = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

/**
 * The last day the country's history reports deliveries on, up to yesterday: the period's cut. A
 * history that stops (an import that ends ten days ago, nothing recorded since) is not a network
 * whose cards stopped arriving; a country still reporting elsewhere is, for an area that has gone
 * quiet. Null when the country has no recent delivery.
 */
export function reportedUntil(countryRecent: RecentCounts, today: string, country: string): string | null {
  const todayMs = Date.parse(`${today}T00:00:00Z`);
  const longest = new Map<number, number>();
  for (const [sinceDays, transit] of countryRecent) longest.set(sinceDays, Math.max(longest.get(sinceDays) ?? 0, transit));
  let latest: string | null = null;
  for (const [sinceDays, transit] of longest) {
    const dispatched = new Date(todayMs - sinceDays * 86_400_000).toISOString().slice(0, 10);
    const delivered = addBusinessDays(businessDayOnOrAfter(dispatched, country), transit, country);
    if (latest === null || delivered > latest) latest = delivered;
  }
  const yesterday = dayBefore(today);
  return latest === null ? null : latest < yesterday ? latest : yesterday;
}

/**
 * A level's recent deliveries with the observable business days of their dispatch day
 * (recentPeriod). Where the period cuts imported deliveries earlier (shiftPeriod), a group's
 * imported and issuers' deliveries are two groups, each with its own cut.
 */
export function recentDeliveries(recent: RecentCounts, period: readonly DispatchDay[]): RecentDelivery[] {
  return recent.flatMap(([sinceDays, transit, count, byIssuers = 0]) => {
    const day = period[sinceDays];
    const observableDays = day?.observableDays ?? -1;
    if (day?.importedObservableDays === undefined) return [{ sinceDays, observableDays, transit, count, byIssuers }];
    return [
      { sinceDays, observableDays: day.importedObservableDays, transit, count: count - byIssuers, byIssuers: 0 },
      { sinceDays, observableDays, transit, count: byIssuers, byIssuers },
    ].filter((g) => g.count > 0);
  });
}

/**
 * The recent change of the destination: the first level (code, then prefix) whose recent
 * deliveries show a shift with SHIFT_EVIDENCE moves the window by the shifts it cannot tell apart
 * (the start by the lowest, the end by the highest), uncertain unless that is one size; without one,
 * the first level with SUSPECT_EVIDENCE is uncertain and widens the window: to both the norm and its
 * plausible shifts where the evidence reaches SHIFT_EVIDENCE (a shift too young for the sign test),
 * else by a business day on the side of its most likely shift. `norms` are the levels' fitted
 * predictive distributions.
 */
export function recentChange(
  stats: Readonly<Record<LevelName, RecentLevel>>,
  norms: Record<LevelName, Histogram>,
  today: string,
  country: string,
): RecentChange {
  const period = shiftPeriod(
    stats.country.recent,
    today,
    country,
    AREAS.some((level) => (stats[level].inFlight ?? []).length > 0),
  );
  const readings = AREAS.map((level) => {
    const shift = recentShift(norms[level], recentDeliveries(stats[level].recent, period), period, stats[level].inFlight);
    return shift && { ...shift, level };
  });
  const detected = readings.find((r) => r !== null && r.confirmed && r.evidence >= SHIFT_EVIDENCE);
  if (detected) {
    const [low, high] = detected.plausible;
    return { early: low, late: high, uncertain: low !== high, shift: { ...detected, detected: true } };
  }
  const suspected = readings.find((r) => r !== null && r.evidence >= SUSPECT_EVIDENCE);
  if (suspected && suspected.evidence >= SHIFT_EVIDENCE) {
    // As strong as a detected shift, but too young for the sign test: both the norm and the shifts.
    return {
      early: Math.min(0, suspected.days),
      late: Math.max(0, suspected.days),
      uncertain: true,
      shift: { ...suspected, detected: false },
    };
  }
  if (suspected) {
    // An unsure alarm costs a day on the shift's side, never its whole plausible range: about one
    // area without change in a hundred raises one at a level (SUSPECT_EVIDENCE), and a week's width
    // for each of those is a window that says nothing.
    const side = Math.sign(suspected.days);
    return { early: Math.min(0, side), late: Math.max(0, side), uncertain: true, shift: { ...suspected, detected: false } };
  }
  return { early: 0, late: 0, uncertain: false, shift: null };
}

/**
 * The statistics with each level's mature recent deliveries added to its held-out ones (the newest
 * of them: split-conformal calibration then follows the network as it is now, not as it was six
 * weeks ago). A recent dispatch is mature once it is at least the p99 transit of the country (or of
 * the level, where slower) old, in business days. On the level where a shift was detected and the
 * more specific ones, a delivery of a dispatch inside the shift's span is taken back by the shift
 * before it is added: the window is fitted on the norm and then moved by the shift, so it is scored
 * as the norm it is corrected for.
 */
export function withMatureRecent<S extends Record<LevelName, RecentLevel>>(
  stats: S,
  norms: Record<LevelName, Histogram>,
  change: RecentChange,
  today: string,
  country: string,
): S {
  const countryP99 = quantile(norms.country, MATURITY_QUANTILE) ?? 0;
  // Each source at its own cut (shiftPeriod): an imported delivery is mature once its dispatch is
  // p99 old by the export, not by yesterday, or the newest held-out deliveries lose their tail.
  const period = shiftPeriod(
    stats.country.recent,
    today,
    country,
    AREAS.some((name) => (stats[name].inFlight ?? []).length > 0),
  );
  const shifted = change.shift?.detected ? LEVELS.slice(0, LEVELS.indexOf(change.shift.level) + 1) : [];
  const level = (name: LevelName): S[LevelName] => {
    const own = stats[name];
    if (own.recent.length === 0) return own;
    // A slowed area's cards take longer: its dispatches mature that much later.
    const slower = shifted.includes(name) ? Math.max(0, change.shift!.days) : 0;
    const p99 = Math.max(countryP99, quantile(norms[name], MATURITY_QUANTILE) ?? 0) + slower;
    const calibration = [...own.calibration];
    for (const delivery of recentDeliveries(own.recent, period)) {
      // Delivered today, past the period's cut (recentPeriod): it counts from tomorrow, as every day's do.
      if (!isMature(delivery, p99) || delivery.transit > delivery.observableDays) continue;
      const inShift = shifted.includes(name) && change.shift !== null && delivery.sinceDays <= change.shift.sinceDays;
      const transit = Math.max(0, delivery.transit - (inShift ? change.shift!.days : 0));
      while (calibration.length <= transit) calibration.push(0);
      calibration[transit] += delivery.count;
    }
    return { ...own, calibration };
  };
  return { ...stats, postalCode: level('postalCode'), postalPrefix: level('postalPrefix'), country: level('country') };
}
