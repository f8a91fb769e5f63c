// The family run's figures (README.md "A family of networks"): per network and confidence level the
// cards, the share delivered inside their window with its 95 % Wilson interval and its interval
// Bonferroni-corrected for every network and level, the median window width beside the oracle's;
// then the same pooled over the networks, the worst network of each level, and whether the goals
// of issue 24 hold: pooled High ≥ 97 %, Medium ≥ 92 %, Low ≥ 85 %, hit rates ordered, each level's
// median width at most the oracle's + 1, no network with a level whose corrected interval lies
// wholly below its target. The coverage arithmetic is domain/prediction-quality.ts's.
import { median, windowBusinessDays, wilsonInterval } from '../../domain/prediction-quality.js';
import type { Prediction } from '../../domain/prediction.js';
import { TARGET_COVERAGE } from '../../domain/prediction-levels.js';
import type { ConfidenceLevel } from '../../domain/vocabulary.js';
import { normalCdf } from '../../domain/statistics.js';
import type { FamilyDelivery, FamilyNetwork } from './family.js';
import type { FamilyOracle } from './family-oracle.js';

const LEVELS: readonly ConfidenceLevel[] = ['High', 'Medium', 'Low'];

export interface LevelScore {
  confidence: ConfidenceLevel;
  cards: number;
  inside: number;
  early: number;
  late: number;
  widths: number[];
  oracleWidths: number[];
}

export interface NetworkScore {
  seed: number;
  name: string;
  today: string;
  levels: LevelScore[];
  /** By kind of area: cards and inside, per level. */
  groups: Record<string, Record<ConfidenceLevel, [cards: number, inside: number]>>;
}

/** The kind of area a card went to, as the report groups them. */
function groupOf(card: FamilyDelivery, history: number): string {
  const { area } = card;
  if (area.disruption) return 'declared disruption';
  if (area.shift) return `recent shift ${area.shift.days > 0 ? 'slower' : 'faster'}`;
  if (history === 0) return 'unseen codes';
  if (history < 10) return 'sparse codes (1–9)';
  return 'regular codes';
}

export function scoreNetwork(
  seed: number,
  network: FamilyNetwork,
  predicted: ReadonlyArray<{ card: FamilyDelivery; prediction: Prediction }>,
  historyCount: ReadonlyMap<string, number>,
  oracle: FamilyOracle,
): NetworkScore {
  const levels = new Map(LEVELS.map((confidence) => [confidence, { confidence, cards: 0, inside: 0, early: 0, late: 0, widths: [] as number[], oracleWidths: [] as number[] }])); // prettier-ignore
  const groups: NetworkScore['groups'] = {};
  for (const { card, prediction } of predicted) {
    const level = levels.get(prediction.confidence)!;
    const { min, max } = prediction.window;
    const inside = card.deliveredDate >= min && card.deliveredDate <= max;
    level.cards += 1;
    if (inside) level.inside += 1;
    else if (card.deliveredDate < min) level.early += 1;
    else level.late += 1;
    level.widths.push(windowBusinessDays(prediction.window, card.area.countryCode));
    level.oracleWidths.push(oracle.width(card, TARGET_COVERAGE[prediction.confidence]));
    const group = groupOf(card, historyCount.get(`${card.area.countryCode}:${card.area.postalCode}`) ?? 0);
    groups[group] ??= { High: [0, 0], Medium: [0, 0], Low: [0, 0] };
    const cell = groups[group][prediction.confidence];
    groups[group][prediction.confidence] = [cell[0] + 1, cell[1] + (inside ? 1 : 0)];
  }
  return { seed, name: network.name, today: network.today, levels: [...levels.values()], groups };
}

/** Two-sided normal quantile: the z with P(|Z| ≤ z) = 1 − alpha (bisection on normalCdf). */
function zFor(alpha: number): number {
  let [lo, hi] = [0, 10];
  for (let i = 0; i < 100; i += 1) {
    const mid = (lo + hi) / 2;
    if (2 * (1 - normalCdf(mid)) > alpha) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Wilson score interval of k/n at normal quantile z. */
function wilson(k: number, n: number, z: number): [number, number] | null {
  if (n === 0) return null;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z / d) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

export interface LevelSummary {
  confidence: ConfidenceLevel;
  target: number;
  cards: number;
  coverage: number | null;
  interval: [number, number] | null;
  medianWidth: number | null;
  oracleMedianWidth: number | null;
}

export interface FamilySummary {
  networks: number;
  pooled: LevelSummary[];
  worst: Array<LevelSummary & { seed: number; corrected: [number, number] | null }>;
  /** Network levels whose Bonferroni-corrected interval lies wholly below the target. */
  belowTarget: Array<{ seed: number; confidence: ConfidenceLevel; cards: number; coverage: number; corrected: [number, number] }>;
  byGroup: Record<string, Record<ConfidenceLevel, [number, number]>>;
  checks: { targets: boolean; ordered: boolean; widths: boolean; noNetworkBelow: boolean };
  goalsMet: boolean;
}

function levelSummary(confidence: ConfidenceLevel, scores: readonly LevelScore[]): LevelSummary {
  const cards = scores.reduce((n, s) => n + s.cards, 0);
  const inside = scores.reduce((n, s) => n + s.inside, 0);
  return {
    confidence,
    target: TARGET_COVERAGE[confidence],
    cards,
    coverage: cards === 0 ? null : inside / cards,
    interval: wilsonInterval(inside, cards),
    medianWidth: median(scores.flatMap((s) => s.widths)),
    oracleMedianWidth: median(scores.flatMap((s) => s.oracleWidths)),
  };
}

export function summariseFamily(networks: readonly NetworkScore[]): FamilySummary {
  const z = zFor(0.05 / (networks.length * LEVELS.length));
  const pooled = LEVELS.map((c) =>
    levelSummary(
      c,
      networks.map((n) => n.levels.find((l) => l.confidence === c)!),
    ),
  );
  const worst: FamilySummary['worst'] = [];
  const belowTarget: FamilySummary['belowTarget'] = [];
  for (const confidence of LEVELS) {
    const rows = networks
      .map((n) => ({ seed: n.seed, level: n.levels.find((l) => l.confidence === confidence)! }))
      .filter((r) => r.level.cards > 0);
    for (const { seed, level } of rows) {
      const corrected = wilson(level.inside, level.cards, z)!;
      if (corrected[1] < TARGET_COVERAGE[confidence]) belowTarget.push({ seed, confidence, cards: level.cards, coverage: level.inside / level.cards, corrected }); // prettier-ignore
    }
    // The worst network of a level: the one whose corrected interval reaches least far up.
    const sorted = [...rows].sort((a, b) => wilson(a.level.inside, a.level.cards, z)![1] - wilson(b.level.inside, b.level.cards, z)![1]);
    if (sorted[0]) worst.push({ ...levelSummary(confidence, [sorted[0].level]), seed: sorted[0].seed, corrected: wilson(sorted[0].level.inside, sorted[0].level.cards, z) }); // prettier-ignore
  }
  const byGroup: FamilySummary['byGroup'] = {};
  for (const n of networks)
    for (const [group, cells] of Object.entries(n.groups)) {
      byGroup[group] ??= { High: [0, 0], Medium: [0, 0], Low: [0, 0] };
      for (const c of LEVELS) byGroup[group][c] = [byGroup[group][c][0] + cells[c][0], byGroup[group][c][1] + cells[c][1]];
    }
  const coverage = (c: ConfidenceLevel) => pooled.find((p) => p.confidence === c)!.coverage ?? 0;
  const checks = {
    targets: pooled.every((p) => p.coverage !== null && p.coverage >= p.target),
    ordered: coverage('High') >= coverage('Medium') && coverage('Medium') >= coverage('Low'),
    widths: pooled.every((p) => p.medianWidth === null || p.oracleMedianWidth === null || p.medianWidth <= p.oracleMedianWidth + 1),
    noNetworkBelow: belowTarget.length === 0,
  };
  return { networks: networks.length, pooled, worst, belowTarget, byGroup, checks, goalsMet: Object.values(checks).every(Boolean) };
}

const pct = (x: number | null) => (x === null ? '–' : `${(100 * x).toFixed(1)} %`);
const range = (r: [number, number] | null) => (r === null ? '–' : `${pct(r[0])} – ${pct(r[1])}`);
const yes = (ok: boolean) => (ok ? 'yes' : '**no**');

export function familyMarkdown(s: FamilySummary, run: Record<string, string | number>): string {
  const lines = [
    `# prediction-quality, ${run.shape === 'today' ? "today's network" : 'family of networks'}: ${run.date}`,
    '',
    `Settings: ${Object.entries(run)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}. Widths in business days, both ends counted.`,
    '',
    `## Pooled over ${s.networks} network${s.networks === 1 ? '' : 's'}`,
    '',
    '| level | target | cards | inside | 95 % interval | median width (oracle) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...s.pooled.map((p) => `| ${p.confidence} | ${pct(p.target)} | ${p.cards} | ${pct(p.coverage)} | ${range(p.interval)} | ${p.medianWidth ?? '–'} (${p.oracleMedianWidth ?? '–'}) |`), // prettier-ignore
    '',
    '## Worst network of each level (lowest Bonferroni-corrected upper bound)',
    '',
    '| level | seed | cards | inside | 95 % interval | corrected interval | median width (oracle) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...s.worst.map((w) => `| ${w.confidence} | ${w.seed} | ${w.cards} | ${pct(w.coverage)} | ${range(w.interval)} | ${range(w.corrected)} | ${w.medianWidth ?? '–'} (${w.oracleMedianWidth ?? '–'}) |`), // prettier-ignore
    '',
    '## Goals',
    '',
    `- every level at its target, pooled: ${yes(s.checks.targets)}`,
    `- hit rates ordered High ≥ Medium ≥ Low: ${yes(s.checks.ordered)}`,
    `- each level's median width ≤ oracle's + 1: ${yes(s.checks.widths)}`,
    `- no network with a level whose corrected interval lies wholly below its target: ${yes(s.checks.noNetworkBelow)}${s.belowTarget.map((b) => ` (seed ${b.seed} ${b.confidence}: ${b.cards} cards, ${pct(b.coverage)}, ${range(b.corrected)})`).join('')}`, // prettier-ignore
    '',
    '## By kind of area (cards, inside), pooled',
    '',
    '| area | High | Medium | Low |',
    '| --- | --- | --- | --- |',
    ...Object.entries(s.byGroup).map(([g, c]) => `| ${g} | ${LEVELS.map((l) => (c[l][0] === 0 ? '–' : `${c[l][0]}, ${pct(c[l][1] / c[l][0])}`)).join(' | ')} |`), // prettier-ignore
  ];
  return `${lines.join('\n')}\n`;
}
