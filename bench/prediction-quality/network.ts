// The simulated carrier network of the prediction-quality benchmark: five countries, each with
// postal prefixes and postal codes of very different volumes, and a transit time per delivery drawn
// in business days of the destination country (domain/calendar.ts: weekends and public holidays),
// from a log-normal body with a long tail (a few cards lost in sorting for days). On top of it:
// - areas with little data: sparse postal codes, codes never seen, and a whole prefix (FR 97, the
//   overseas departments) that is both sparse and much slower than its country;
// - a slowdown nobody declares: DE prefix 10 has been SLOWDOWN_DAYS slower for the last
//   SLOWDOWN_SINCE_DAYS days, and still is;
// - a declared disruption: IT prefix 20 is DISRUPTION_DAYS (± 1) slower from today, which the
//   benchmark declares with `conditions set` (the history does not show it yet).
// Everything is drawn from one seeded PRNG, so a seed gives the same network, history and held-out
// dispatches on every run.
import { addBusinessDays, businessDayOnOrAfter } from '../../domain/calendar.js';

export const SLOWDOWN = { country: 'DE', prefix: '10', days: 2, sinceDays: 35 } as const;
export const DISRUPTION = { country: 'IT', prefix: '20', days: 3 } as const;
export const SPARSE_PREFIX = { country: 'FR', prefix: '97' } as const;
/** A postal code with fewer deliveries than this in the history is "sparse" in the report. */
export const SPARSE_HISTORY = 10;

/** mulberry32: a small, fast 32-bit PRNG; good enough for simulation, and seedable. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Standard normal by Box–Muller. */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

export type AreaKind = 'dense' | 'medium' | 'sparse' | 'unseen';

export interface PostalArea {
  countryCode: string;
  prefix: string;
  postalCode: string;
  kind: AreaKind;
  /** Deliveries a year to this code (the history's volume). */
  perYear: number;
  /** Log of the median transit in business days, and the spread of the body. */
  mu: number;
  sigma: number;
  /** Probability that a card is held up in sorting, and the tail it then adds. */
  tailProbability: number;
}

interface CountryShape {
  /** Median transit (business days) and log-normal spread of its typical code. */
  median: number;
  sigma: number;
  prefixes: string[];
}

const COUNTRIES: Record<string, CountryShape> = {
  FR: { median: 2.2, sigma: 0.3, prefixes: ['75', '69', '13', '33', '59', '31', '44', '67', '97'] },
  DE: { median: 1.6, sigma: 0.3, prefixes: ['10', '20', '80', '50', '60', '70', '01', '30'] },
  IT: { median: 3.5, sigma: 0.35, prefixes: ['00', '20', '10', '40', '50', '80', '90'] },
  ES: { median: 2.8, sigma: 0.35, prefixes: ['28', '08', '41', '46', '48', '29', '15'] },
  PL: { median: 2.6, sigma: 0.4, prefixes: ['00', '30', '50', '60', '80', '90'] },
};
const CODES_PER_PREFIX = 12;

/** The network: every postal area with its volume and transit distribution. */
export function buildNetwork(random: () => number): PostalArea[] {
  const areas: PostalArea[] = [];
  for (const [countryCode, shape] of Object.entries(COUNTRIES)) {
    for (const prefix of shape.prefixes) {
      const overseas = countryCode === SPARSE_PREFIX.country && prefix === SPARSE_PREFIX.prefix;
      // Prefixes differ (a hub city is faster than a mountain valley), codes within a prefix less so.
      const prefixMu = Math.log(overseas ? 6 : shape.median) + 0.15 * normal(random);
      for (let code = 0; code < CODES_PER_PREFIX; code += 1) {
        const draw = random();
        const kind: AreaKind = overseas ? (draw < 0.5 ? 'sparse' : 'unseen') : draw < 0.3 ? 'dense' : draw < 0.6 ? 'medium' : draw < 0.9 ? 'sparse' : 'unseen'; // prettier-ignore
        const perYear = { dense: 120 + random() * 280, medium: 12 + random() * 45, sparse: 1 + random() * 6, unseen: 0 }[kind];
        areas.push({
          countryCode,
          prefix,
          postalCode: `${prefix}${String(Math.floor(random() * 1000)).padStart(3, '0')}`,
          kind,
          perYear,
          mu: prefixMu + 0.1 * normal(random),
          sigma: shape.sigma * (0.7 + 0.6 * random()),
          tailProbability: 0.02 + 0.04 * random(),
        });
      }
    }
  }
  // Two draws may give one code twice: keep the first, so a code has one transit distribution.
  const seen = new Set<string>();
  return areas.filter((a) => {
    const key = `${a.countryCode}${a.postalCode}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export const inSlowdown = (a: PostalArea) => a.countryCode === SLOWDOWN.country && a.prefix === SLOWDOWN.prefix;
export const inDisruption = (a: PostalArea) => a.countryCode === DISRUPTION.country && a.prefix === DISRUPTION.prefix;

/** Transit in business days of one card to the area: log-normal body, sometimes a sorting hold-up. */
export function drawTransit(area: PostalArea, random: () => number): number {
  let days = Math.max(1, Math.round(Math.exp(area.mu + area.sigma * normal(random))));
  if (random() < area.tailProbability) days += Math.round(Math.exp(Math.log(4) + 0.6 * normal(random)));
  return days;
}

/**
 * The delivery date of a card dispatched on `dispatchDate` (YYYY-MM-DD) to the area, `daysAgo`
 * days before today (0: dispatched today). The slowdown applies to dispatches of its last weeks and
 * to today's; the disruption only to today's (it starts now).
 */
export function deliveryDate(area: PostalArea, dispatchDate: string, daysAgo: number, random: () => number): string {
  let days = drawTransit(area, random);
  if (inSlowdown(area) && daysAgo <= SLOWDOWN.sinceDays) days += SLOWDOWN.days;
  if (inDisruption(area) && daysAgo === 0) days += DISRUPTION.days - 1 + Math.floor(random() * 3);
  return addBusinessDays(businessDayOnOrAfter(dispatchDate, area.countryCode), days, area.countryCode);
}

export interface HistoryRow {
  postalCode: string;
  countryCode: string;
  dispatchDate: string;
  deliveredDate: string;
}

/**
 * Past deliveries over `days` days before `today`, each area at its yearly volume. Only cards
 * delivered before today are known, so the slowest of the last weeks' dispatches are missing, as
 * in any real history.
 */
export function* history(areas: readonly PostalArea[], today: string, days: number, random: () => number): Generator<HistoryRow> {
  const todayMs = Date.parse(`${today}T00:00:00Z`);
  for (const area of areas) {
    const count = Math.round((area.perYear * days) / 365);
    for (let i = 0; i < count; i += 1) {
      const daysAgo = 1 + Math.floor(random() * days);
      const dispatchDate = new Date(todayMs - daysAgo * 86_400_000).toISOString().slice(0, 10);
      const deliveredDate = deliveryDate(area, dispatchDate, daysAgo, random);
      if (deliveredDate < today) yield { postalCode: area.postalCode, countryCode: area.countryCode, dispatchDate, deliveredDate };
    }
  }
}

/** A dispatch registered today and the day the simulated network delivers it. */
export interface HeldOutDispatch {
  area: PostalArea;
  deliveredDate: string;
}

/** Picks an area with probability proportional to `weight`. */
function pick(areas: readonly PostalArea[], weight: (a: PostalArea) => number, random: () => number): PostalArea {
  const total = areas.reduce((sum, a) => sum + weight(a), 0);
  let left = random() * total;
  for (const area of areas) {
    left -= weight(area);
    if (left < 0) return area;
  }
  return areas[areas.length - 1];
}

/**
 * `count` dispatches made today: 60 % where the network's volume is, and, so that each has enough
 * cards to be measured, 20 % spread evenly over the sparse and unseen codes, 10 % in the slowdown
 * area and 10 % in the disrupted one (both by volume).
 */
export function heldOut(areas: readonly PostalArea[], today: string, count: number, random: () => number): HeldOutDispatch[] {
  const seen = areas.filter((a) => a.perYear > 0);
  const little = areas.filter((a) => a.kind === 'sparse' || a.kind === 'unseen');
  const groups: Array<[share: number, from: readonly PostalArea[], weight: (a: PostalArea) => number]> = [
    [0.6, seen, (a) => a.perYear],
    [0.2, little, () => 1],
    [0.1, seen.filter(inSlowdown), (a) => a.perYear],
    [0.1, seen.filter(inDisruption), (a) => a.perYear],
  ];
  const dispatches: HeldOutDispatch[] = [];
  for (const [share, from, weight] of groups) {
    for (let i = 0; i < Math.round(share * count); i += 1) {
      const area = pick(from, weight, random);
      dispatches.push({ area, deliveredDate: deliveryDate(area, today, 0, random) });
    }
  }
  return dispatches;
}

/** The kind of area a held-out card went to, as the report groups them. */
export function areaGroup(d: HeldOutDispatch, historyTransit: ReadonlyMap<string, readonly number[]>): string {
  const { area } = d;
  if (inSlowdown(area))
    return `slowdown ${SLOWDOWN.country} ${SLOWDOWN.prefix}* (undeclared, +${SLOWDOWN.days} for ${SLOWDOWN.sinceDays} days)`;
  if (inDisruption(area)) return `disruption ${DISRUPTION.country} ${DISRUPTION.prefix}* (declared +${DISRUPTION.days}, actual +${DISRUPTION.days - 1}…+${DISRUPTION.days + 1})`; // prettier-ignore
  if (area.countryCode === SPARSE_PREFIX.country && area.prefix === SPARSE_PREFIX.prefix)
    return `sparse slow prefix ${SPARSE_PREFIX.country} ${SPARSE_PREFIX.prefix}* (few deliveries, ~3× the country's transit)`;
  const history = historyTransit.get(`${area.countryCode}:${area.postalCode}`)?.length ?? 0;
  if (history === 0) return 'unseen codes (no history, prefix known)';
  if (history < SPARSE_HISTORY) return `sparse codes (1–${SPARSE_HISTORY - 1} deliveries in history)`;
  return 'regular codes';
}
