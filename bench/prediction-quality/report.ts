// Turns a prediction-quality run into its result: coverage and window width per confidence level
// (domain/prediction-quality.ts, the same figures `predictions quality` prints), the same by kind of
// area (regular, the undeclared slowdown, the declared disruption, sparse and unseen codes, the
// sparse slow prefix), the foundation's fixed table on the same cards for comparison, each level's
// median width beside the oracle's (the narrowest window holding the level's target under each
// card's true distribution, oracle.ts), and the check that `predictions quality` reports on the
// delivered sample what the simulator computes for it, every delivery counted, and how many of them
// the model did not learn from and why, as the run counted them itself.
import { median, qualityByConfidence, summariseOutcomes, targetVerdict, type ConfidenceQuality, type PredictionOutcome, type QualitySummary } from '../../domain/prediction-quality.js'; // prettier-ignore
import { businessDayOnOrAfter, businessDaysBetween } from '../../domain/calendar.js';
import { TARGET_COVERAGE } from '../../domain/prediction-levels.js';
import type { ConfidenceLevel } from '../../domain/vocabulary.js';
import type { Oracle } from './oracle.js';
import { areaGroup, type HeldOutDispatch } from './network.js';

export interface Settings {
  seed: number;
  heldOut: number;
  historyDays: number;
  concurrency: number;
  deliverSample: number;
}

type Registered = HeldOutDispatch & { outcome: PredictionOutcome };

interface GroupRow {
  group: string;
  summary: QualitySummary;
  confidenceMix: Record<ConfidenceLevel, number>;
  /**
   * Medians, in business days from the first business day on or after dispatch: where windows
   * started and ended, and when the cards arrived. A shift (slowdown, disruption) shows here.
   */
  medianTransit: { history: number | null; windowStart: number | null; windowEnd: number | null; actual: number | null };
}

/** What the simulator's true distributions give a level's cards at the level's target (oracle.ts). */
interface OracleRow {
  confidence: ConfidenceLevel;
  target: number;
  /** Median width (business days, both ends) of each card's narrowest true window holding the target. */
  medianWindowDays: number | null;
  /** Share of the level's cards inside their own true window: what the best possible model would have hit. */
  coverage: number | null;
}

export interface Result {
  date: string;
  settings: Settings;
  byConfidence: ConfidenceQuality[];
  oracleByConfidence: OracleRow[];
  overall: QualitySummary;
  byArea: GroupRow[];
  /** The foundation's per-country table (domain/prediction.ts) on the same cards. */
  foundation: QualitySummary;
  /**
   * `predictions quality` on the delivered sample, beside the simulator's figures for it: per level,
   * the deliveries counted, and those the model did not learn from (`implausible` is reported, not
   * checked: the run does not recompute the country's bound).
   */
  check: {
    sample: number;
    cli: unknown[];
    simulator: unknown[];
    dispatches: number;
    notLearned: Record<string, number>;
    expectedNotLearned: Record<string, number>;
  };
  cliMatches: boolean;
  environment: Record<string, string | number>;
}

const asCliRow = (r: ConfidenceQuality) => ({
  confidence_level: r.confidence,
  dispatches: r.dispatches,
  inside: r.inside,
  early: r.early,
  late: r.late,
  median_window_days: r.medianWindowDays,
});

/** `predictions quality --json` (docs/prediction-quality.md "Quality"). */
export interface CliReport {
  data: Array<Record<string, unknown>>;
  dispatches: number;
  not_learned: Record<string, number>;
}

export function buildResult(input: {
  date: string;
  settings: Settings;
  registered: Registered[];
  historyTransit: ReadonlyMap<string, readonly number[]>;
  foundation: PredictionOutcome[];
  sample: PredictionOutcome[];
  cli: CliReport;
  /** What the run knows of its sample: every one registered late, and those reported late. */
  expectedNotLearned: Record<string, number>;
  oracle: Oracle;
  environment: Record<string, string | number>;
}): Result {
  const outcomes = input.registered.map((d) => d.outcome);
  const groups = new Map<string, Registered[]>();
  for (const d of input.registered) {
    const group = areaGroup(d, input.historyTransit);
    groups.set(group, [...(groups.get(group) ?? []), d]);
  }
  const byArea = [...groups.entries()]
    .sort(([a], [b]) => (a === 'regular codes' ? -1 : b === 'regular codes' ? 1 : a.localeCompare(b)))
    .map(([group, members]) => ({
      group,
      summary: summariseOutcomes(members.map((m) => m.outcome)),
      confidenceMix: { High: 0, Medium: 0, Low: 0, ...countBy(members.map((m) => m.outcome.confidence)) },
      medianTransit: medianTransit(input.date, members, input.historyTransit),
    }));
  const simulator = qualityByConfidence(input.sample).map(asCliRow);
  const cli = input.cli.data.map((row) => ({
    confidence_level: row.confidence_level,
    dispatches: row.dispatches,
    inside: row.inside,
    early: row.early,
    late: row.late,
    median_window_days: row.median_window_days,
  }));
  const transitOf = (d: Registered) => {
    const country = d.area.countryCode;
    return businessDaysBetween(businessDayOnOrAfter(input.date, country), d.deliveredDate, country);
  };
  const oracleByConfidence = (['High', 'Medium', 'Low'] as const).map((confidence): OracleRow => {
    const target = TARGET_COVERAGE[confidence];
    const cards = input.registered.filter((d) => d.outcome.confidence === confidence);
    const windows = cards.map((d) => [d, input.oracle.window(d.area, target)] as const);
    const inside = windows.filter(([d, [lo, hi]]) => transitOf(d) >= lo && transitOf(d) <= hi).length;
    return {
      confidence,
      target,
      medianWindowDays: median(windows.map(([, [lo, hi]]) => hi - lo + 1)),
      coverage: cards.length === 0 ? null : inside / cards.length,
    };
  });
  return {
    date: input.date,
    settings: input.settings,
    byConfidence: qualityByConfidence(outcomes),
    oracleByConfidence,
    overall: summariseOutcomes(outcomes),
    byArea,
    foundation: summariseOutcomes(input.foundation),
    check: {
      sample: input.sample.length,
      cli,
      simulator,
      dispatches: input.cli.dispatches,
      notLearned: input.cli.not_learned,
      expectedNotLearned: input.expectedNotLearned,
    },
    cliMatches:
      JSON.stringify(cli) === JSON.stringify(simulator) &&
      input.cli.dispatches === input.sample.length &&
      Object.entries(input.expectedNotLearned).every(([reason, n]) => input.cli.not_learned[reason] === n),
    environment: input.environment,
  };
}

function medianTransit(
  today: string,
  members: Registered[],
  historyTransit: ReadonlyMap<string, readonly number[]>,
): GroupRow['medianTransit'] {
  const after = (m: Registered, date: string) => {
    const country = m.area.countryCode;
    return businessDaysBetween(businessDayOnOrAfter(today, country), date, country);
  };
  const areas = new Set(members.map((m) => `${m.area.countryCode}:${m.area.postalCode}`));
  return {
    history: median([...areas].flatMap((area) => historyTransit.get(area) ?? [])),
    windowStart: median(members.map((m) => after(m, m.outcome.window.min))),
    windowEnd: median(members.map((m) => after(m, m.outcome.window.max))),
    actual: median(members.map((m) => after(m, m.deliveredDate))),
  };
}

function countBy<T extends string>(values: T[]): Partial<Record<T, number>> {
  const counts: Partial<Record<T, number>> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

const pct = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)} %`);
const interval = (s: QualitySummary) => (s.coverageInterval ? `${pct(s.coverageInterval[0])} – ${pct(s.coverageInterval[1])}` : '–');
const share = (count: number, s: QualitySummary) => (s.dispatches === 0 ? '–' : pct(count / s.dispatches));
const days = (value: number | null) => (value === null ? '–' : String(value));

function markdownTable(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

const widthVerdict = (model: number | null, oracle: number | null) =>
  model === null || oracle === null ? '–' : model <= oracle + 1 ? 'yes' : 'no';

/** Whether the levels' hit rates are ordered as their targets are (levels without cards are left out). */
export function ordered(rows: readonly ConfidenceQuality[]): boolean {
  const rates = rows.filter((r) => r.coverage !== null).map((r) => r.coverage!);
  return rates.every((rate, i) => i === 0 || rates[i - 1] > rate);
}

export function toMarkdown(r: Result): string {
  const verdict = (row: ConfidenceQuality) => targetVerdict(row)?.replace('_', ' ') ?? '–';
  return [
    `# prediction-quality, ${r.date}`,
    '',
    `${r.overall.dispatches} held-out dispatches registered today through the real API; actual delivery drawn by the simulated network (seed ${r.settings.seed}, ${r.settings.historyDays} days of history). Width: business days of the destination country in the window, both ends counted.`,
    '',
    '## By confidence level',
    '',
    markdownTable(
      ['confidence', 'dispatches', 'inside window', '95 % interval', 'target', 'verdict', 'early', 'late', 'median width (business days)', 'oracle median width at target', 'width ≤ oracle + 1', 'oracle inside'], // prettier-ignore
      [
        ...r.byConfidence.map((row) => {
          const oracle = r.oracleByConfidence.find((o) => o.confidence === row.confidence);
          return [row.confidence, String(row.dispatches), pct(row.coverage), interval(row), pct(row.targetCoverage), verdict(row), share(row.early, row), share(row.late, row), days(row.medianWindowDays), days(oracle?.medianWindowDays ?? null), widthVerdict(row.medianWindowDays, oracle?.medianWindowDays ?? null), pct(oracle?.coverage ?? null)]; // prettier-ignore
        }),
        ['all', String(r.overall.dispatches), pct(r.overall.coverage), interval(r.overall), '', '', share(r.overall.early, r.overall), share(r.overall.late, r.overall), days(r.overall.medianWindowDays), '', '', ''], // prettier-ignore
        ['foundation table, same cards', String(r.foundation.dispatches), pct(r.foundation.coverage), interval(r.foundation), '', '', share(r.foundation.early, r.foundation), share(r.foundation.late, r.foundation), days(r.foundation.medianWindowDays), '', '', ''], // prettier-ignore
      ],
    ),
    '',
    `Hit rates ordered High > Medium > Low: **${ordered(r.byConfidence) ? 'yes' : 'no'}**. Oracle: each card's narrowest window holding its level's target under the simulator's true distribution of its code (with the slowdown or disruption where they apply); "oracle inside" is the share of the level's cards inside their own oracle window.`,
    '',
    '## By kind of area',
    '',
    markdownTable(
      ['area', 'dispatches', 'High / Medium / Low', 'inside window', '95 % interval', 'early', 'late', 'median width', 'median past transit', 'median window (transit days)', 'median actual transit'], // prettier-ignore
      r.byArea.map((g) => [g.group, String(g.summary.dispatches), `${g.confidenceMix.High} / ${g.confidenceMix.Medium} / ${g.confidenceMix.Low}`, pct(g.summary.coverage), interval(g.summary), share(g.summary.early, g.summary), share(g.summary.late, g.summary), days(g.summary.medianWindowDays), days(g.medianTransit.history), `${days(g.medianTransit.windowStart)} – ${days(g.medianTransit.windowEnd)}`, days(g.medianTransit.actual)]), // prettier-ignore
    ),
    '',
    '## Check',
    '',
    `\`predictions quality\` on ${r.check.sample} dispatches delivered through carrier events (to the areas of a sample of the held-out cards, dispatched 45 days ago so that their deliveries lie in the past) ${r.cliMatches ? 'reports exactly' : '**differs from**'} the simulator's figures for them (dispatches, inside, early, late and median width per level) and the run's own count of those the model did not learn from.`,
    '',
    markdownTable(
      ['', 'delivered', 'not learned from', 'late registration', 'late report', 'delivered before dispatch', 'implausible'],
      [
        ['predictions quality', r.check.dispatches, ...['dispatches', 'late_registration', 'late_report', 'delivered_before_dispatch', 'implausible'].map((k) => r.check.notLearned[k])], // prettier-ignore
        ['the run', r.check.sample, ...['dispatches', 'late_registration', 'late_report', 'delivered_before_dispatch', 'implausible'].map((k) => r.check.expectedNotLearned[k] ?? 'not counted')], // prettier-ignore
      ].map((row) => row.map(String)),
    ),
    '',
    '## Settings and environment',
    '',
    markdownTable(
      ['setting', 'value'],
      [...Object.entries(r.settings), ...Object.entries(r.environment)].map(([k, v]) => [k, String(v)]),
    ),
    '',
  ].join('\n');
}
