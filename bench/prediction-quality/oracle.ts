// How much of a group's coverage is the luck of its held-out cards: the simulator knows each postal
// code's true transit distribution, which no model does. For the groups without carrier conditions,
// this prints how often the true distributions' own 90 % intervals (the code's, and its prefix's
// pooled by volume) hold the very cards the benchmark draws, beside how often they would on average.
// An oracle far below 90 % on a group says its cards, not the model, are unusual.
//   npx tsx bench/prediction-quality/oracle.ts [seed …]   (default: the benchmark's seed)
import { businessDayOnOrAfter, businessDaysBetween } from '../../domain/calendar.js';
import { shortestInterval, total } from '../../domain/statistics.js';
import { buildNetwork, drawTransit, heldOut, history, prng, type PostalArea } from './network.js';
import { areaGroup } from './report.js';

const DRAWS_PER_AREA = 20_000;
const today = new Date().toISOString().slice(0, 10);
const seeds = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [20261122];

/** The area's true transit distribution, by Monte Carlo with its own PRNG (the benchmark's stream is untouched). */
function trueDistribution(area: PostalArea, random: () => number): number[] {
  const h: number[] = [];
  for (let i = 0; i < DRAWS_PER_AREA; i += 1) {
    const d = drawTransit(area, random);
    while (h.length <= d) h.push(0);
    h[d] += 1;
  }
  return h;
}

const mass = (h: readonly number[], [lo, hi]: [number, number]) => total(h.slice(lo, hi + 1)) / total(h);
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

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
  const mc = prng(seed + 1);
  const distributions = new Map(network.map((a) => [a, trueDistribution(a, mc)]));
  const pooled = new Map<string, number[]>();
  for (const a of network) {
    const key = `${a.countryCode}:${a.prefix}`;
    const h = distributions.get(a)!.map((w) => (w * a.perYear) / DRAWS_PER_AREA);
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
