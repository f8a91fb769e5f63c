// The retention benchmark's report (bench/retention/run.ts): the sweep's time and counts, status
// reads beside it, bytes per dispatch per table and in Temporal's store, and the database's size over
// a year at 1,000 dispatches a day with the default windows beside the same year without them.
import type { LoadResult } from '../status-read/load.js';
import type { RetentionSummary } from '../../temporal/contract.js';

export interface Sizes {
  databaseBytes: number;
  tableBytes: Record<string, number>;
  temporalStoreBytes: Record<string, number>;
}

/** One window of status reads and what the machine's cores did meanwhile. */
export interface ReadWindow {
  /** `precise` is absent in results before 2026-11-28T17 (autocannon's whole milliseconds only). */
  result: Omit<LoadResult, 'precise'> & { precise?: LoadResult['precise'] };
  machineBusyPercent: number;
  loadAverage: number;
  /** Cores used by the benchmark's own processes (the stack and the load generator). */
  ourCores: number;
  /** Cores used by everything else on the machine (other sessions' tests and builds). */
  otherCores: number;
  cores: Record<string, number>;
}

export interface BenchResult {
  date: string;
  machine: string;
  settings: { dispatches: number; real: number; live: number; loadSeconds: number; connections: number; batchPause?: string };
  /** Sizes before and after the real dispatches' lives. */
  real: { dispatches: number; before: Sizes; after: Sizes };
  /** What the backlog's seed added to each table (the completed dispatches only), and the database's size then. */
  seeded: { dispatches: number; tables: Record<string, number>; database: number; payloadBytesPerDispatch: number };
  sweep: {
    seconds: number;
    summary: RetentionSummary;
    /** Dispatches still past the window after the sweep (should be 0). */
    dueLeft: number;
    dispatchRunsLeft: number;
    machineBusyPercent: number;
    after: { tables: Record<string, number>; database: number };
  };
  /** Reads without the sweep before it, during it (consecutive windows), and again once it ended (the machine's drift meanwhile; not in results before 2026-11-28T14). */
  reads: { baseline: ReadWindow; during: ReadWindow[]; after?: ReadWindow };
  /** The machine's load average (1 min) when the results were written (the start's is in `machine`). */
  loadAverageAtEnd?: number;
}

const MIB = 1024 * 1024;
const GOAL_SECONDS = 600;
const GOAL_P99_RATIO = 1.5;

/** Postgres bytes per dispatch, per table, from the real dispatches' growth. */
export function realBytesPerDispatch(result: BenchResult): Record<string, number> {
  const { before, after, dispatches } = result.real;
  return Object.fromEntries(
    Object.keys(after.tableBytes)
      .map((table): [string, number] => [table, (after.tableBytes[table] - (before.tableBytes[table] ?? 0)) / dispatches])
      .filter(([, bytes]) => bytes > 0),
  );
}

function temporalBytesPerDispatch(result: BenchResult): number {
  const sum = (sizes: Record<string, number>) => Object.values(sizes).reduce((a, b) => a + b, 0);
  return (sum(result.real.after.temporalStoreBytes) - sum(result.real.before.temporalStoreBytes)) / result.real.dispatches;
}

/**
 * Days a dispatch stays, by what: the model of a year at 1,000 dispatches a day. A card is in
 * transit ~5 days, its workflow closes 7 days after delivery (DELIVERED_RETENTION), Temporal keeps
 * a closed run 30 days (the namespace's retention, deploy/README.md); RETENTION_DISPATCH counts
 * from the last carrier event, RETENTION_WEBHOOK_PAYLOAD from the last attempt.
 */
const LIFE = { transit: 5, workflowOpenAfterDelivery: 7, namespaceRetention: 30, dispatch: 180, payload: 30, history: 800 };

/** Rows alive on `day` when one day's dispatches each stay `keptDays`. */
const alive = (day: number, keptDays: number) => Math.min(day, keptDays) * 1000;

export function yearTable(perDispatchPostgres: number, payloadBytes: number, historyRowBytes: number, temporalBytes: number) {
  const temporalDays = LIFE.transit + LIFE.workflowOpenAfterDelivery + LIFE.namespaceRetention;
  const rows: Array<{ day: number; without: number; withDefaults: number }> = [];
  for (const day of [30, 60, 90, 180, 270, 365]) {
    const temporal = alive(day, temporalDays) * temporalBytes;
    const without = alive(day, Infinity) * perDispatchPostgres + temporal;
    const dispatchBytes = perDispatchPostgres - historyRowBytes;
    const withDefaults =
      alive(day, LIFE.transit + LIFE.dispatch) * (dispatchBytes - payloadBytes) +
      alive(day, Math.min(LIFE.transit + LIFE.payload, LIFE.transit + LIFE.dispatch)) * payloadBytes +
      alive(day, LIFE.history) * historyRowBytes +
      temporal;
    rows.push({ day, without, withDefaults });
  }
  return rows;
}

const ms = (value: number) => `${Number.isInteger(value) ? value : value.toFixed(2)} ms`;
/**
 * A window's p99 as the goal compares it: load.ts's precise one (fractional ms) where the result has
 * it, else autocannon's whole milliseconds (results before 2026-11-28T17), where 4 ms is 4.0 to 4.99.
 */
export const p99Of = (r: ReadWindow) => r.result.precise?.p99Ms ?? r.result.p99Ms;
const preciseMs = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(2)} ms`);
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

export function toMarkdown(result: BenchResult): string {
  const { sweep, reads } = result;
  const worstDuring = reads.during.reduce((worst, r) => (p99Of(r) > p99Of(worst) ? r : worst), reads.during[0]);
  const ratio = worstDuring ? p99Of(worstDuring) / p99Of(reads.baseline) : NaN;
  // Windows in which the rest of the machine took no more than it did without the sweep (+0.3 core).
  const quiet = reads.during.filter((r) => r.otherCores <= reads.baseline.otherCores + 0.3);
  const worstQuiet = quiet.reduce<ReadWindow | undefined>((worst, r) => (!worst || p99Of(r) > p99Of(worst) ? r : worst), undefined);
  const quietRatio = worstQuiet ? p99Of(worstQuiet) / p99Of(reads.baseline) : NaN;
  const perTable = realBytesPerDispatch(result);
  const seededPerTable = Object.fromEntries(
    Object.entries(result.seeded.tables)
      .filter(([, bytes]) => bytes > 0)
      .map(([table, bytes]) => [table, bytes / result.seeded.dispatches]),
  );
  // The backlog's bulk rows measure Postgres (a few hundred real dispatches fill pages and indexes
  // only partly); the real lives measure Temporal, whose store the seed does not touch.
  const postgresPerDispatch = Object.values(seededPerTable).reduce((a, b) => a + b, 0);
  const realPerDispatch = Object.values(perTable).reduce((a, b) => a + b, 0);
  const temporal = temporalBytesPerDispatch(result);
  const historyRow = seededPerTable.transit_history ?? 0;
  const year = yearTable(postgresPerDispatch, result.seeded.payloadBytesPerDispatch, historyRow, temporal);
  const lines = [
    `# Retention benchmark, ${result.date}`,
    '',
    `Machine: ${result.machine}. Settings: ${JSON.stringify(result.settings)}.`,
    '',
    '## The sweep',
    '',
    `\`retention run\` over ${result.seeded.dispatches.toLocaleString('en')} seeded completed dispatches and ${result.real.dispatches} real ones past RETENTION_DISPATCH: ` +
      `**${sweep.seconds.toFixed(1)} s** (goal < ${GOAL_SECONDS} s: ${sweep.seconds < GOAL_SECONDS ? 'met' : 'not met'}), ` +
      `${JSON.stringify(sweep.summary)}; ${sweep.dueLeft} due dispatches left, ${sweep.dispatchRunsLeft} dispatch workflow runs left in Temporal; ` +
      `machine ${sweep.machineBusyPercent} % busy meanwhile.`,
    '',
    '## Status reads of live dispatches, without and with the sweep (one run, side by side)',
    '',
    "p50 and p99 from every response's duration (load.ts `precise`); in brackets autocannon's whole milliseconds (truncated), which earlier results report.",
    '',
    '| reads | requests/s | p50 | p99 | max | non-2xx | machine busy | cores: ours / other sessions | load avg |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...[
      { name: 'without the sweep', r: reads.baseline },
      ...reads.during.map((r, i) => ({ name: `during the sweep, window ${i + 1}`, r })),
      ...(reads.after ? [{ name: 'without the sweep, after it', r: reads.after }] : []),
    ].map(
      ({ name, r }) =>
        `| ${name} (${r.result.seconds} s) | ${r.result.rps} | ${preciseMs(r.result.precise?.p50Ms)} (${r.result.p50Ms}) | ${preciseMs(r.result.precise?.p99Ms)} (${r.result.p99Ms}) | ${ms(r.result.maxMs)} | ${r.result.non2xx} | ${r.machineBusyPercent} % | ${r.ourCores} / ${r.otherCores} | ${r.loadAverage} |`,
    ),
    '',
    `Worst p99 during the sweep / p99 without: **${ratio.toFixed(2)}×** (goal ≤ ${GOAL_P99_RATIO}×: ${ratio <= GOAL_P99_RATIO ? 'met' : 'not met'}). ` +
      `In the ${quiet.length} of ${reads.during.length} windows where other sessions took no more of the machine than without the sweep: ` +
      `${Number.isNaN(quietRatio) ? 'none' : `**${quietRatio.toFixed(2)}×**`}.` +
      (reads.after
        ? ` Without the sweep again after it: p99 ${ms(p99Of(reads.after))} (${(p99Of(reads.after) / p99Of(reads.baseline)).toFixed(2)}× the first window: how far the machine drifted meanwhile; worst window during the sweep / this: ${(p99Of(worstDuring) / p99Of(reads.after)).toFixed(2)}×).`
        : '') +
      (result.loadAverageAtEnd !== undefined ? ` Load average at the end: ${result.loadAverageAtEnd.toFixed(2)}.` : ''),
    '',
    '## Bytes per dispatch',
    '',
    `Postgres: what the seeded backlog of ${result.seeded.dispatches.toLocaleString('en')} completed dispatches added to each table (with its indexes and TOAST), per dispatch (the rows one life leaves: seed.ts). ` +
      `Beside it, ${result.real.dispatches} dispatches through their whole life in the real service (registration, three carrier events, one signed webhook each; partly filled pages and indexes make these figures high). ` +
      `Temporal: the growth of its store over those real lives, per dispatch.`,
    '',
    '| table | seeded backlog, bytes/dispatch | real lives, bytes/dispatch |',
    '| --- | --- | --- |',
    ...Object.keys(seededPerTable)
      .sort()
      .map((t) => `| ${t} | ${Math.round(seededPerTable[t])} | ${Math.round(perTable[t] ?? 0)} |`),
    `| **Postgres, all tables** | **${Math.round(postgresPerDispatch)}** | ${Math.round(realPerDispatch)} |`,
    `| **Temporal's store** (dev server SQLite file + WAL) | | **${Math.round(temporal)}** |`,
    '',
    `Of which the webhook payload (event bodies, attempts' request headers and response heads) that RETENTION_WEBHOOK_PAYLOAD clears: ${Math.round(result.seeded.payloadBytesPerDispatch)} bytes (seeded).`,
    '',
    '## A year at 1,000 dispatches a day',
    '',
    `Model: rows alive × bytes per dispatch above (Postgres reuses freed space, so the size follows the rows alive); a card in transit ${LIFE.transit} days, its workflow open ${LIFE.workflowOpenAfterDelivery} days after delivery, Temporal keeping a closed run ${LIFE.namespaceRetention} days (the namespace's retention, in both columns).`,
    '',
    '| day | without retention | default windows (180d / 30d / 800d) |',
    '| --- | --- | --- |',
    ...year.map((r) => `| ${r.day} | ${mib(r.without)} | ${mib(r.withDefaults)} |`),
    '',
  ];
  return `${lines.join('\n')}\n`;
}
