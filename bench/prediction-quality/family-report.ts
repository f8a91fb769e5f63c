// The family run's figures (README.md "A family of networks"): per network and confidence level the
// cards, the share delivered inside their window with its 95 % Wilson interval and its interval
// Bonferroni-corrected for every network and level, the median window width beside the oracle's;
// then the same pooled over the networks, the worst network of each level, and whether the goals
// of issues 24 and 29 hold: pooled High ≥ 97 %, Medium ≥ 92 %, Low ≥ 85 %, hit rates ordered, each
// level's median width at most the oracle's + 1 on the cards to unchanged areas and on those to
// changed ones (a recent shift or a declared disruption) apart, no network with a level whose
// corrected interval lies wholly below its target, and the shift detector's false alarms (the
// share of unchanged areas it flags, suspected or detected) at most 5 %. The coverage arithmetic
// is domain/prediction-quality.ts's.
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
  /** The same widths, of the cards to areas that changed (a recent shift, a declared disruption). */
  changedWidths: number[];
  changedOracleWidths: number[];
}

/** Areas (seen postal codes) the shift detector flags, suspected or detected, by whether they changed. */
export interface Alarms {
  unchanged: number;
  unchangedFlagged: number;
  changed: number;
  changedFlagged: number;
}

/** Whether a card's area changed: a recent shift or a declared disruption. */
export const changedArea = (area: FamilyDelivery['area']) => area.shift !== null || area.disruption !== null;

export interface NetworkScore {
  seed: number;
  name: string;
  today: string;
  levels: LevelScore[];
  /** By kind of area: cards and inside, per level. */
  groups: Record<string, Record<ConfidenceLevel, [cards: number, inside: number]>>;
  alarms: Alarms;
  exportGapDays: number;
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
  alarms: Alarms,
): NetworkScore {
  const levels = new Map(LEVELS.map((confidence) => [confidence, { confidence, cards: 0, inside: 0, early: 0, late: 0, widths: [] as number[], oracleWidths: [] as number[], changedWidths: [] as number[], changedOracleWidths: [] as number[] }])); // prettier-ignore
  const groups: NetworkScore['groups'] = {};
  for (const { card, prediction } of predicted) {
    const level = levels.get(prediction.confidence)!;
    const { min, max } = prediction.window;
    const inside = card.deliveredDate >= min && card.deliveredDate <= max;
    level.cards += 1;
    if (inside) level.inside += 1;
    else if (card.deliveredDate < min) level.early += 1;
    else level.late += 1;
    const changed = changedArea(card.area);
    (changed ? level.changedWidths : level.widths).push(windowBusinessDays(prediction.window, card.area.countryCode));
    (changed ? level.changedOracleWidths : level.oracleWidths).push(oracle.width(card, TARGET_COVERAGE[prediction.confidence]));
    const group = groupOf(card, historyCount.get(`${card.area.countryCode}:${card.area.postalCode}`) ?? 0);
    groups[group] ??= { High: [0, 0], Medium: [0, 0], Low: [0, 0] };
    const cell = groups[group][prediction.confidence];
    groups[group][prediction.confidence] = [cell[0] + 1, cell[1] + (inside ? 1 : 0)];
  }
  return { seed, name: network.name, today: network.today, levels: [...levels.values()], groups, alarms, exportGapDays: network.exportGapDays }; // prettier-ignore
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
  /** Median widths of the cards to unchanged areas, and to changed ones. */
  medianWidth: number | null;
  oracleMedianWidth: number | null;
  changedMedianWidth: number | null;
  changedOracleMedianWidth: number | null;
}

export interface FamilySummary {
  networks: number;
  pooled: LevelSummary[];
  worst: Array<LevelSummary & { seed: number; corrected: [number, number] | null }>;
  /** Network levels whose Bonferroni-corrected interval lies wholly below the target. */
  belowTarget: Array<{ seed: number; confidence: ConfidenceLevel; cards: number; coverage: number; corrected: [number, number] }>;
  byGroup: Record<string, Record<ConfidenceLevel, [number, number]>>;
  alarms: Alarms;
  checks: { targets: boolean; ordered: boolean; widths: boolean; changedWidths: boolean; noNetworkBelow: boolean; falseAlarms: boolean };
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
    changedMedianWidth: median(scores.flatMap((s) => s.changedWidths)),
    changedOracleMedianWidth: median(scores.flatMap((s) => s.changedOracleWidths)),
  };
}

/** Issue 29: at most this share of the areas that did not change may be flagged. */
export const MAX_FALSE_ALARMS = 0.05;
export const falseAlarmRate = (a: Alarms) => (a.unchanged === 0 ? 0 : a.unchangedFlagged / a.unchanged);

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
  const alarms: Alarms = { unchanged: 0, unchangedFlagged: 0, changed: 0, changedFlagged: 0 };
  for (const n of networks) for (const k of Object.keys(alarms) as Array<keyof Alarms>) alarms[k] += n.alarms[k];
  const coverage = (c: ConfidenceLevel) => pooled.find((p) => p.confidence === c)!.coverage ?? 0;
  const within = (width: number | null, oracle: number | null) => width === null || oracle === null || width <= oracle + 1;
  const checks = {
    targets: pooled.every((p) => p.coverage !== null && p.coverage >= p.target),
    ordered: coverage('High') >= coverage('Medium') && coverage('Medium') >= coverage('Low'),
    widths: pooled.every((p) => within(p.medianWidth, p.oracleMedianWidth)),
    changedWidths: pooled.every((p) => within(p.changedMedianWidth, p.changedOracleMedianWidth)),
    noNetworkBelow: belowTarget.length === 0,
    falseAlarms: falseAlarmRate(alarms) <= MAX_FALSE_ALARMS,
  };
  return { networks: networks.length, pooled, worst, belowTarget, byGroup, alarms, checks, goalsMet: Object.values(checks).every(Boolean) };
}

const pct = (x: number | null) => (x === null ? '–' : `${(100 * x).toFixed(1)} %`);
const range = (r: [number, number] | null) => (r === null ? '–' : `${pct(r[0])} – ${pct(r[1])}`);
const yes = (ok: boolean) => (ok ? 'yes' : '**no**');

const width = (w: number | null, o: number | null) => `${w ?? '–'} (${o ?? '–'})`;

/** The report of one run: each model's summary (this tree's first, then the previous main's) side by side. */
export function familyMarkdown(
  models: ReadonlyArray<{ label: string; summary: FamilySummary }>,
  run: Record<string, string | number>,
): string {
  const rows = <T>(each: (m: { label: string; summary: FamilySummary }) => T[]) => models.flatMap(each);
  const s = models[0].summary;
  const lines = [
    `# prediction-quality, ${run.shape === 'today' ? "today's network" : 'family of networks'}: ${run.date}`,
    '',
    `Settings: ${Object.entries(run)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}. Widths in business days, both ends counted; each model on the same networks, history and cards.`,
    '',
    `## Pooled over ${s.networks} network${s.networks === 1 ? '' : 's'}`,
    '',
    '| model | level | target | cards | inside | 95 % interval | median width (oracle), unchanged areas | changed areas |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows(({ label, summary }) => summary.pooled.map((p) => `| ${label} | ${p.confidence} | ${pct(p.target)} | ${p.cards} | ${pct(p.coverage)} | ${range(p.interval)} | ${width(p.medianWidth, p.oracleMedianWidth)} | ${width(p.changedMedianWidth, p.changedOracleMedianWidth)} |`)), // prettier-ignore
    '',
    '## Shift alarms (seen postal codes flagged suspected or detected)',
    '',
    '| model | unchanged areas | flagged (false alarms) | changed areas (recent shift) | flagged |',
    '| --- | --- | --- | --- | --- |',
    ...rows(({ label, summary: { alarms: a } }) => [`| ${label} | ${a.unchanged} | ${a.unchangedFlagged} (${pct(falseAlarmRate(a))}) | ${a.changed} | ${a.changedFlagged} (${pct(a.changed === 0 ? null : a.changedFlagged / a.changed)}) |`]), // prettier-ignore
    '',
    '## Worst network of each level (lowest Bonferroni-corrected upper bound)',
    '',
    '| model | level | seed | cards | inside | 95 % interval | corrected interval | median width (oracle), unchanged | changed |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows(({ label, summary }) => summary.worst.map((w) => `| ${label} | ${w.confidence} | ${w.seed} | ${w.cards} | ${pct(w.coverage)} | ${range(w.interval)} | ${range(w.corrected)} | ${width(w.medianWidth, w.oracleMedianWidth)} | ${width(w.changedMedianWidth, w.changedOracleMedianWidth)} |`)), // prettier-ignore
    '',
    '## Goals',
    '',
    ...rows(({ label, summary: m }) => [
      `- ${label}: every level at its target, pooled: ${yes(m.checks.targets)}; ordered High ≥ Medium ≥ Low: ${yes(m.checks.ordered)}; median width ≤ oracle's + 1, unchanged areas: ${yes(m.checks.widths)}, changed areas: ${yes(m.checks.changedWidths)}; false alarms ≤ ${pct(MAX_FALSE_ALARMS)}: ${yes(m.checks.falseAlarms)}; no network with a level whose corrected interval lies wholly below its target: ${yes(m.checks.noNetworkBelow)}${m.belowTarget.map((b) => ` (seed ${b.seed} ${b.confidence}: ${b.cards} cards, ${pct(b.coverage)}, ${range(b.corrected)})`).join('')}`, // prettier-ignore
    ]),
    '',
    '## By kind of area (cards, inside), pooled',
    '',
    '| model | area | High | Medium | Low |',
    '| --- | --- | --- | --- | --- |',
    ...rows(({ label, summary }) => Object.entries(summary.byGroup).map(([g, c]) => `| ${label} | ${g} | ${LEVELS.map((l) => (c[l][0] === 0 ? '–' : `${c[l][0]}, ${pct(c[l][1] / c[l][0])}`)).join(' | ')} |`)), // prettier-ignore
  ];
  return `${lines.join('\n')}\n`;
}
