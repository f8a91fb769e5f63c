// A family of simulated carrier networks for the prediction-quality benchmark (README.md "A family
// of networks"): each seed draws a network's shape as well as its history, so the model is measured
// on networks it was not developed on. A shape: 3–6 countries, each with a transit body of 1–10
// business days (log-normal or gamma, narrow or wide), prefixes and codes that differ, a late tail
// of sorting hold-ups, dense, medium, sparse and unseen postal codes, recent shifts of ±1–3 business
// days that started 5–35 days ago in 5–20 % of the prefixes, declared disruptions, and dispatches at
// any hour of the day, those after the carrier's cut-off handed over the next business day; and
// what an imported history really looks like (issue 29): it ends at an export 0–7 days before
// today, its volume varies by weekday and season and stops on public holidays, and some codes run a
// little faster or slower than their area.
// "today" is the network network.ts describes (the one the model was developed on), as a named shape.
// Everything is drawn from one seeded PRNG (network.ts prng).
import { addBusinessDays, businessDayOnOrAfter } from '../../domain/calendar.js';
import { isPublicHoliday } from '../../domain/holidays.js';
import { buildNetwork, DISRUPTION, inDisruption, inSlowdown, prng, SLOWDOWN, type AreaKind } from './network.js';

export type Random = () => number;

/** One postal code of a family network and how its cards travel. */
export interface FamilyArea {
  countryCode: string;
  prefix: string;
  postalCode: string;
  kind: AreaKind;
  perYear: number;
  body: { family: 'lognormal' | 'gamma'; median: number; spread: number };
  tail: { probability: number; medianDays: number };
  /** Dispatches of the last `sinceDays` days take `days` business days more (negative: fewer). */
  shift: { days: number; sinceDays: number } | null;
  /** Declared today by the operator; a card dispatched today takes declared − 1 … + 1 more. */
  disruption: { declaredDays: number } | null;
}

export interface FamilyNetwork {
  name: string;
  areas: FamilyArea[];
  /** Dispatches at this hour (UTC) or later are handed over the next business day; null: at noon, always the same day. */
  cutoffHour: number | null;
  /** The day the held-out cards are dispatched (a weekday). */
  today: string;
  /** The history was exported this many days before today: it holds the deliveries made before that day. */
  exportGapDays: number;
  /** Dispatches by weekday, season and public holiday (a real issuer's), or evenly over the days. */
  volume: 'seasonal' | 'even';
}

/** Standard normal by Box–Muller. */
const normal = (random: Random) => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

/** Gamma(shape k, scale 1) by Marsaglia and Tsang. */
function gamma(k: number, random: Random): number {
  if (k < 1) return gamma(k + 1, random) * Math.pow(random(), 1 / k);
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const z = normal(random);
    const v = (1 + c * z) ** 3;
    if (v > 0 && Math.log(1 - random()) < 0.5 * z * z + d - d * v + d * Math.log(v)) return d * v;
  }
}

const COUNTRY_POOL = ['FR', 'DE', 'IT', 'ES', 'PL', 'NL', 'BE', 'AT', 'PT', 'SE', 'DK', 'FI', 'CZ'];
const CODES_PER_PREFIX = 12;
const between = (random: Random, lo: number, hi: number) => lo + (hi - lo) * random();

/** A weekday of 2027, so that holidays fall wherever the seed puts them. */
function weekdayOf2027(random: Random): string {
  for (;;) {
    const date = new Date(Date.UTC(2027, 0, 1) + Math.floor(random() * 365) * 86_400_000);
    if (date.getUTCDay() !== 0 && date.getUTCDay() !== 6) return date.toISOString().slice(0, 10);
  }
}

/** The network of a seed: its shape, then its areas. */
export function drawNetwork(seed: number, random: Random): FamilyNetwork {
  const countries = [...COUNTRY_POOL].sort(() => random() - 0.5).slice(0, 3 + Math.floor(random() * 4));
  const areas: FamilyArea[] = [];
  for (const countryCode of countries) {
    const median = Math.exp(between(random, Math.log(1), Math.log(10)));
    const family = random() < 0.5 ? 'lognormal' : 'gamma';
    const spread = between(random, 0.15, 0.5);
    const prefixSd = between(random, 0.05, 0.25);
    const tail = { probability: between(random, 0, 0.08), medianDays: between(random, 2, 8) };
    const prefixes = 5 + Math.floor(random() * 5);
    const used = new Set<string>();
    for (let p = 0; p < prefixes; p += 1) {
      let prefix: string;
      do prefix = String(10 + Math.floor(random() * 90));
      while (used.has(prefix));
      used.add(prefix);
      // One prefix in ten is a sparse, far slower one (an island, a mountain valley).
      const remote = random() < 0.1;
      const prefixMedian = median * (remote ? between(random, 1.8, 3) : Math.exp(prefixSd * normal(random)));
      for (let c = 0; c < CODES_PER_PREFIX; c += 1) {
        const draw = random();
        const kind: AreaKind = remote ? (draw < 0.5 ? 'sparse' : 'unseen') : draw < 0.3 ? 'dense' : draw < 0.6 ? 'medium' : draw < 0.9 ? 'sparse' : 'unseen'; // prettier-ignore
        const perYear = { dense: 120 + random() * 280, medium: 12 + random() * 45, sparse: 1 + random() * 6, unseen: 0 }[kind];
        areas.push({
          countryCode,
          prefix,
          postalCode: `${prefix}${String(Math.floor(random() * 1000)).padStart(3, '0')}`,
          kind,
          perYear,
          body: { family, median: prefixMedian * Math.exp(0.08 * normal(random)), spread: spread * between(random, 0.8, 1.2) },
          tail,
          shift: null,
          disruption: null,
        });
      }
    }
  }
  const unique = dedupe(areas);
  // Recent shifts in 5–20 % of the prefixes (at least one), ±1–3 business days, started 5–35 days ago.
  const prefixes = [...new Set(unique.map((a) => `${a.countryCode}:${a.prefix}`))].sort(() => random() - 0.5);
  const shifted = prefixes.slice(0, Math.max(1, Math.round(prefixes.length * between(random, 0.05, 0.2))));
  for (const key of shifted) {
    const inPrefix = unique.filter((a) => `${a.countryCode}:${a.prefix}` === key);
    const size = 1 + Math.floor(random() * 3);
    // Faster only where the prefix's typical card takes more than the shift plus a day.
    const days = random() < 0.5 && Math.min(...inPrefix.map((a) => a.body.median)) >= size + 1.5 ? -size : size;
    const sinceDays = 5 + Math.floor(random() * 31);
    for (const area of inPrefix) area.shift = { days, sinceDays };
  }
  // Declared disruptions: none to two prefixes, not among the shifted ones, +1…+4 declared.
  const disrupted = prefixes.slice(shifted.length, shifted.length + Math.floor(random() * 3));
  for (const key of disrupted) {
    const declaredDays = 1 + Math.floor(random() * 4);
    for (const area of unique.filter((a) => `${a.countryCode}:${a.prefix}` === key)) area.disruption = { declaredDays };
  }
  const network = { name: `family seed ${seed}`, areas: unique, cutoffHour: 14 + Math.floor(random() * 5), today: weekdayOf2027(random) };
  // What an imported history looks like, from a PRNG of its own: the shapes above stay each seed's.
  const real = prng(seed * 31 + 7);
  for (const area of unique)
    if (real() < 0.25)
      area.body = { ...area.body, median: area.body.median * Math.exp((real() < 0.5 ? -1 : 1) * between(real, 0.15, 0.3)) };
  return { ...network, exportGapDays: Math.floor(real() * 8), volume: 'seasonal' };
}

/** Two draws may give one code twice: keep the first, so a code has one transit distribution. */
function dedupe(areas: FamilyArea[]): FamilyArea[] {
  const seen = new Set<string>();
  return areas.filter((a) => {
    const key = `${a.countryCode}${a.postalCode}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** network.ts's network (the one the model was developed on) as a family network: the named shape "today". */
export function todayNetwork(random: Random, today: string): FamilyNetwork {
  const areas = buildNetwork(random).map((a): FamilyArea => ({
    countryCode: a.countryCode,
    prefix: a.prefix,
    postalCode: a.postalCode,
    kind: a.kind,
    perYear: a.perYear,
    body: { family: 'lognormal', median: Math.exp(a.mu), spread: a.sigma },
    tail: { probability: a.tailProbability, medianDays: 4 },
    shift: inSlowdown(a) ? { days: SLOWDOWN.days, sinceDays: SLOWDOWN.sinceDays } : null,
    disruption: inDisruption(a) ? { declaredDays: DISRUPTION.days } : null,
  }));
  return { name: 'today', areas, cutoffHour: null, today, exportGapDays: 0, volume: 'even' };
}

/** Transit of one card in business days from the first business day on or after its dispatch date. */
export function drawTransit(area: FamilyArea, daysAgo: number, hour: number, cutoffHour: number | null, random: Random): number {
  const { family, median, spread } = area.body;
  // A gamma body with the same median and coefficient of variation `spread`.
  const body = family === 'lognormal' ? median * Math.exp(spread * normal(random)) : (gamma(1 / spread ** 2, random) * median * spread ** 2) / medianFactor(spread); // prettier-ignore
  let days = Math.max(1, Math.round(body));
  if (random() < area.tail.probability) days += Math.round(area.tail.medianDays * Math.exp(0.6 * normal(random)));
  if (cutoffHour !== null && hour >= cutoffHour) days += 1;
  if (area.shift && daysAgo <= area.shift.sinceDays) days = Math.max(1, days + area.shift.days);
  if (area.disruption && daysAgo === 0) days += area.disruption.declaredDays - 1 + Math.floor(random() * 3);
  return days;
}

/** Median of Gamma(k = 1/cv², scale cv²) (mean 1), by Wilson–Hilferty: the gamma body is scaled to its median. */
function medianFactor(cv: number): number {
  const k = 1 / cv ** 2;
  return (1 - 1 / (9 * k)) ** 3;
}

export interface FamilyDelivery {
  area: FamilyArea;
  dispatchDate: string;
  /** Hour (UTC) the card was handed over. */
  hour: number;
  deliveredDate: string;
}

const dayBefore = (today: string, days: number) =>
  new Date(Date.parse(`${today}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);

/** A card of the area dispatched `daysAgo` days before the network's today, at a random hour. */
export function card(network: FamilyNetwork, area: FamilyArea, daysAgo: number, random: Random): FamilyDelivery {
  const dispatchDate = dayBefore(network.today, daysAgo);
  const hour = network.cutoffHour === null ? 12 : Math.floor(between(random, 6, 22));
  const transit = drawTransit(area, daysAgo, hour, network.cutoffHour, random);
  const deliveredDate = addBusinessDays(businessDayOnOrAfter(dispatchDate, area.countryCode), transit, area.countryCode);
  return { area, dispatchDate, hour, deliveredDate };
}

/** Relative volume of dispatches on a day, Monday to Saturday (Sunday: none worth counting). */
const WEEKDAY_VOLUME = [0.02, 1.2, 1, 1, 1, 0.9, 0.15];

/**
 * How many cards an issuer dispatches on `date` to `country`, relative to its busiest (≤ 1): by
 * weekday, by season (a quarter more before Christmas, a quarter less in August) and next to none on
 * a public holiday.
 */
function dispatchVolume(date: string, country: string): number {
  const d = new Date(`${date}T00:00:00Z`);
  const dayOfYear = (Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000;
  const season = 1 + 0.25 * Math.cos((2 * Math.PI * (dayOfYear - 340)) / 365);
  const holiday = isPublicHoliday(country, date) ? 0.05 : 1;
  return (WEEKDAY_VOLUME[d.getUTCDay()] * season * holiday) / (1.2 * 1.25);
}

/**
 * The history: each area's deliveries of the last `days` days at its volume (spread by weekday,
 * season and holiday where the network's volume is seasonal), those delivered before the export.
 */
export function* familyHistory(network: FamilyNetwork, days: number, random: Random): Generator<FamilyDelivery> {
  const exported = dayBefore(network.today, network.exportGapDays);
  for (const area of network.areas) {
    const count = Math.round((area.perYear * days) / 365);
    for (let i = 0; i < count; i += 1) {
      let daysAgo = 1 + Math.floor(random() * days);
      if (network.volume === 'seasonal')
        while (random() > dispatchVolume(dayBefore(network.today, daysAgo), area.countryCode)) daysAgo = 1 + Math.floor(random() * days);
      const delivery = card(network, area, daysAgo, random);
      if (delivery.deliveredDate < exported) yield delivery;
    }
  }
}

/** Poisson draw of mean `mean` (Knuth; the means here are a few cards). */
function poisson(mean: number, random: Random): number {
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k += 1;
  return k;
}

/**
 * The cards the service itself registered since the export (issue 29): the issuer went live with
 * the service the day its history was exported, so every card it dispatched from that day to
 * yesterday was registered as it left (prompt, the model may learn from it), at the volume its
 * history shows for the day (by weekday, season and holiday, as familyHistory draws it). Each is
 * delivered or still on its way as the network's transit (shifts included) decides; the delivered
 * ones reported the day they arrived. None where the history runs to yesterday (an export of today).
 */
export function* serviceRegistrations(network: FamilyNetwork, historyDays: number, random: Random): Generator<FamilyDelivery> {
  for (const area of network.areas) {
    if (area.perYear === 0) continue;
    // familyHistory's daily density: the area's yearly volume spread over the days by their volume.
    const weights = Array.from({ length: historyDays }, (_, i) =>
      network.volume === 'seasonal' ? dispatchVolume(dayBefore(network.today, i + 1), area.countryCode) : 1,
    );
    const mean = weights.reduce((sum, w) => sum + w, 0) / historyDays;
    for (let daysAgo = 1; daysAgo <= network.exportGapDays; daysAgo += 1) {
      const weight = network.volume === 'seasonal' ? dispatchVolume(dayBefore(network.today, daysAgo), area.countryCode) : 1;
      const cards = poisson(((area.perYear / 365) * weight) / mean, random);
      for (let i = 0; i < cards; i += 1) yield card(network, area, daysAgo, random);
    }
  }
}

/** Picks an area with probability proportional to `weight`. */
function pick(areas: readonly FamilyArea[], weight: (a: FamilyArea) => number, random: Random): FamilyArea {
  const sum = areas.reduce((s, a) => s + weight(a), 0);
  let left = random() * sum;
  for (const area of areas) {
    left -= weight(area);
    if (left < 0) return area;
  }
  return areas[areas.length - 1];
}

/**
 * `count` cards dispatched today: 60 % where the volume is, 20 % spread evenly over sparse and unseen
 * codes, 10 % in the shifted prefixes and 10 % in the disrupted ones (by volume; the share of a
 * group the network lacks goes to the volume), so that each group has cards to measure.
 */
export function familyHeldOut(network: FamilyNetwork, count: number, random: Random): FamilyDelivery[] {
  const seen = network.areas.filter((a) => a.perYear > 0);
  const little = network.areas.filter((a) => a.kind === 'sparse' || a.kind === 'unseen');
  const groups: Array<[number, FamilyArea[], (a: FamilyArea) => number]> = [
    [0.2, little, () => 1],
    [0.1, seen.filter((a) => a.shift !== null), (a) => a.perYear],
    [0.1, seen.filter((a) => a.disruption !== null), (a) => a.perYear],
  ];
  const cards: FamilyDelivery[] = [];
  let left = count;
  for (const [share, from, weight] of groups) {
    if (from.length === 0) continue;
    for (let i = 0; i < Math.round(share * count); i += 1) cards.push(card(network, pick(from, weight, random), 0, random));
    left -= Math.round(share * count);
  }
  for (let i = 0; i < left; i += 1)
    cards.push(
      card(
        network,
        pick(seen, (a) => a.perYear, random),
        0,
        random,
      ),
    );
  return cards;
}
