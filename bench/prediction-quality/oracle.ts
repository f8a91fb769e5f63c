// The oracle: the simulator knows each postal code's true transit distribution, which no model does.
// Two uses:
// - trueDistributions (run.ts, report.ts): for a held-out card, the narrowest window that would hold
//   a given coverage under the card's true distribution (its code's body and tail, plus the
//   slowdown or the disruption where they apply). A level's median width is compared with the
//   oracle's median width at the same target: the model's windows should be at most a business day
//   wider than the best any model could do.
// - the script below: for the groups without carrier conditions, how often the true distributions'
//   own 90 % intervals (the code's, and its prefix's pooled by volume) hold the very cards the
//   benchmark draws, beside how often they would on average. An oracle far below 90 % on a group
//   says its cards, not the model, are unusual.
//   npx tsx bench/prediction-quality/oracle.ts [seed …]   (default: the benchmark's seed)
import { pathToFileURL } from 'node:url';
import { businessDayOnOrAfter, businessDaysBetween } from '../../domain/calendar.js';
import { normalCdf, shortestInterval, total } from '../../domain/statistics.js';
import { areaGroup, buildNetwork, DISRUPTION, heldOut, history, inDisruption, inSlowdown, prng, SLOWDOWN, type PostalArea } from './network.js'; // prettier-ignore

/** Transit beyond this many business days is left out of a true distribution (its mass is below 1e-9). */
const MAX_DAYS = 80;

/** P(round(exp(mu + sigma·Z)) = k) for k = 0, 1, …, MAX_DAYS, Z standard normal. */
function roundedLogNormal(mu: number, sigma: number): number[] {
  const below = (x: number) => (x <= 0 ? 0 : normalCdf((Math.log(x) - mu) / sigma));
  return Array.from({ length: MAX_DAYS + 1 }, (_, k) => below(k + 0.5) - below(k - 0.5));
}

/**
 * The area's true transit distribution (business days), computed exactly from network.ts
 * drawTransit's definition: a rounded log-normal body of at least a day, plus, with the area's tail
 * probability, a rounded log-normal hold-up; for a card dispatched today, the slowdown's days or
 * the disruption's 2–4 (deliveryDate). No sampling, so the same area always gets the same answer.
 */
function trueDistribution(area: PostalArea, dispatchedToday: boolean): number[] {
  const rounded = roundedLogNormal(area.mu, area.sigma);
  const body = rounded.map((p, d) => (d === 0 ? 0 : d === 1 ? p + rounded[0] : p));
  const holdUp = roundedLogNormal(Math.log(4), 0.6);
  let h = Array<number>(2 * MAX_DAYS + 1).fill(0);
  body.forEach((p, d) => {
    h[d] += p * (1 - area.tailProbability);
    holdUp.forEach((q, k) => (h[d + k] += p * area.tailProbability * q));
  });
  const shift = (by: number[]) => {
    const out = Array<number>(h.length + 5).fill(0);
    h.forEach((p, d) => by.forEach((days) => (out[d + days] += p / by.length)));
    return out;
  };
  if (dispatchedToday && inSlowdown(area)) h = shift([SLOWDOWN.days]);
  if (dispatchedToday && inDisruption(area)) h = shift([DISRUPTION.days - 1, DISRUPTION.days, DISRUPTION.days + 1]);
  return h;
}

/** True distributions of cards dispatched today. */
export interface Oracle {
  distribution(area: PostalArea): number[];
  /** The narrowest window (business days after dispatch) holding `coverage` of the area's true distribution. */
  window(area: PostalArea, coverage: number): [number, number];
}

export function trueDistributions(): Oracle {
  const cache = new Map<PostalArea, number[]>();
  const distribution = (area: PostalArea) => {
    let h = cache.get(area);
    if (!h) cache.set(area, (h = trueDistribution(area, true)));
    return h;
  };
  return { distribution, window: (area, coverage) => shortestInterval(distribution(area), coverage) };
}

const mass = (h: readonly number[], [lo, hi]: [number, number]) => total(h.slice(lo, hi + 1)) / total(h);
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

function printGroupOracles(seeds: number[]): void {
  const today = new Date().toISOString().slice(0, 10);
  for (const seed of seeds) {
    // The benchmark's sequence of draws: network, history, held-out dispatches (run.ts).
    const random = prng(seed);
    const network = buildNetwork(random);
    const historyTransit = new Map<string, number[]>();
    for (const row of history(network, today, 365, random)) {
      const key = `${row.countryCode}:${row.postalCode}`;
      historyTransit.set(key, [...(historyTransit.get(key) ?? []), 0]);
    }
    const dispatches = heldOut(network, today, 1500, random);
    const distributions = new Map(network.map((a) => [a, trueDistribution(a, false)]));
    const pooled = new Map<string, number[]>();
    for (const a of network) {
      const key = `${a.countryCode}:${a.prefix}`;
      const h = distributions.get(a)!.map((w) => w * a.perYear);
      const sum = pooled.get(key) ?? [];
      h.forEach((w, d) => (sum[d] = (sum[d] ?? 0) + w));
      pooled.set(key, sum);
    }
    const groups = new Map<string, { cards: number; code: [number, number]; prefix: [number, number] }>();
    for (const d of dispatches) {
      const group = areaGroup(d, historyTransit);
      if (group.startsWith('slowdown') || group.startsWith('disruption')) continue;
      const own = distributions.get(d.area)!;
      const codeInterval = shortestInterval(own, 0.9);
      const prefixInterval = shortestInterval(pooled.get(`${d.area.countryCode}:${d.area.prefix}`)!, 0.9);
      const actual = businessDaysBetween(businessDayOnOrAfter(today, d.area.countryCode), d.deliveredDate, d.area.countryCode);
      const inside = ([lo, hi]: [number, number]) => (actual >= lo && actual <= hi ? 1 : 0);
      const g = groups.get(group) ?? { cards: 0, code: [0, 0], prefix: [0, 0] };
      g.cards += 1;
      g.code = [g.code[0] + inside(codeInterval), g.code[1] + mass(own, codeInterval)];
      g.prefix = [g.prefix[0] + inside(prefixInterval), g.prefix[1] + mass(own, prefixInterval)];
      groups.set(group, g);
    }
    console.log(`seed ${seed}: cards inside the true 90 % intervals, realised (expected)`);
    for (const [group, g] of groups)
      console.log(`  ${group}: ${g.cards} cards; code's own ${pct(g.code[0] / g.cards)} (${pct(g.code[1] / g.cards)}); prefix pooled ${pct(g.prefix[0] / g.cards)} (${pct(g.prefix[1] / g.cards)})`); // prettier-ignore
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  printGroupOracles(process.argv.length > 2 ? process.argv.slice(2).map(Number) : [20261122]);
