// The scale benchmark's results as Markdown: each part's figures with the engines side by side,
// then per engine the details (per-phase CPU, memory, checks, each refresh run, machine load).
import type { EngineKind } from './engine.js';
import type { LifecycleResult } from './lifecycle.js';
import { describeMemory } from '../webhook-latency/report.js';
import type { MemoryFigures } from './memory.js';
import type { RefreshResult } from './refresh.js';
import type { RegistrationResult } from './registration.js';

export interface Load {
  at: string;
  /** /proc/loadavg as read. */
  loadavg: string;
}

interface PartRun<T> {
  settings: unknown;
  loadBefore: Load;
  loadAfter: Load;
  wallSeconds: number;
  environment: Record<string, string>;
  figures: T;
}

export interface EngineResults {
  engine: EngineKind;
  parts: {
    lifecycle?: PartRun<LifecycleResult>;
    refresh?: PartRun<RefreshResult>;
    registration?: PartRun<RegistrationResult>;
  };
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => `${Math.round(bytes / MIB)} MiB`;
const NAMES: Record<EngineKind, string> = { dev: 'dev server (SQLite)', production: 'Temporal server on Postgres' };

function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** One row per figure, one column per engine that has the part. */
function sideBySide<T>(
  engines: EngineResults[],
  pick: (e: EngineResults) => PartRun<T> | undefined,
  rows: Array<[string, (f: T) => string | number]>,
): string {
  const have = engines.filter((e) => pick(e));
  if (!have.length) return '_not run_';
  return table(
    ['figure', ...have.map((e) => NAMES[e.engine])],
    rows.map(([name, get]) => [name, ...have.map((e) => String(get(pick(e)!.figures)))]),
  );
}

function memoryTable(memory: Record<string, MemoryFigures>): string {
  return table(
    ['process', 'resident at the start', 'VmHWM (kernel peak; Postgres: postmaster only)', 'highest sampled', 'at the end'],
    Object.entries(memory).map(([name, m]) => [
      name,
      m.startMiB === undefined ? '–' : `${m.startMiB} MiB`,
      `${m.vmHwmMiB} MiB`,
      `${m.sampledPeakMiB} MiB`,
      `${m.endMiB} MiB`,
    ]),
  );
}

function cpuCells(cpu: Record<string, number>, busyPercent: number): string {
  const ours = Object.values(cpu).reduce((a, b) => a + b, 0);
  const others = Math.max(0, (busyPercent / 100) * 2 - ours);
  return `${Object.entries(cpu)
    .map(([name, cores]) => `${name} ${cores}`)
    .join(', ')}; machine ${busyPercent} % busy (others ≈ ${others.toFixed(2)} cores)`;
}

/** CPU milliseconds per item (delivery, registration) of each process: cores × 1000 / items per second. */
function perItem(cpu: Record<string, number>, perSecond: number): string {
  const cells = Object.entries(cpu).map(([name, cores]) => [name, (cores * 1000) / perSecond] as const);
  const total = cells.reduce((sum, [, ms]) => sum + ms, 0);
  return `${cells.map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', ')}; total ${total.toFixed(1)} ms`;
}

function loadLine(run: PartRun<unknown>): string {
  return `load average before ${run.loadBefore.loadavg.split(' ').slice(0, 3).join(' ')}, after ${run.loadAfter.loadavg.split(' ').slice(0, 3).join(' ')}; ${run.wallSeconds} s`;
}

export function toMarkdown(date: string, engines: EngineResults[]): string {
  const out: string[] = [`# bench/scale — ${date}`, ''];
  out.push('Engines: ' + engines.map((e) => NAMES[e.engine]).join(', ') + '. README.md explains every figure.', '');

  out.push('## 1. Dispatches through their whole life', '');
  out.push(
    sideBySide(engines, (e) => e.parts.lifecycle, [
      ['dispatches', (f) => f.dispatches],
      ['total time', (f) => `${f.totalSeconds} s`],
      ['registrations/s (batches of 1,000, one at a time)', (f) => f.registration.perSecond],
      ['batch of 1,000: median', (f) => `${f.registration.batchMedianMs} ms`],
      ['carrier events/s (accepted, 3 phases)', (f) => f.events.eventsPerSecond],
      ['deliveries/s (signed webhooks arrived)', (f) => f.events.deliveriesPerSecond],
      ['webhooks lost', (f) => f.lost],
      ['worker peak resident (VmHWM), goal ≤ 1024 MiB', (f) => `${f.memory.worker?.vmHwmMiB} MiB`],
      ['history events per dispatch (median, min–max)', (f) => `${f.historyEvents.median} (${f.historyEvents.min}–${f.historyEvents.max})`],
      ['application database (pg_database_size)', (f) => mib(f.databaseBytes)],
      [
        'Temporal store',
        (f) =>
          Object.entries(f.temporalStoreBytes)
            .map(([k, v]) => `${k} ${mib(v)}`)
            .join(', '),
      ],
    ]),
    '',
  );

  out.push('## 2. Hourly refresh over the open dispatches', '');
  const runRow = (
    i: number,
    name: string,
    get: (r: RefreshResult['runs'][number]) => string | number,
  ): [string, (f: RefreshResult) => string | number] => [`${name}`, (f) => (f.runs[i] ? get(f.runs[i]) : '–')];
  out.push(
    sideBySide(engines, (e) => e.parts.refresh, [
      ['open dispatches (seeded + registered)', (f) => `${f.open} (${f.seeded} + ${f.registered})`],
      runRow(0, 'idle run: duration', (r) => `${r.seconds} s`),
      runRow(
        0,
        'idle run: considered / changed / signalled',
        (r) => `${r.summary.considered} / ${r.summary.changed} / ${r.summary.signalled}`,
      ),
      runRow(1, 'after a statistics change: duration (goal < 300 s)', (r) => `${r.seconds} s`),
      runRow(
        1,
        'after the change: considered / changed / signalled / missing',
        (r) => `${r.summary.considered} / ${r.summary.changed} / ${r.summary.signalled} / ${r.summary.missing}`,
      ),
      runRow(1, 'after the change: projections moved, by country', (r) => JSON.stringify(r.versionsMoved)),
      runRow(2, 'idle again: duration', (r) => `${r.seconds} s`),
      runRow(2, 'idle again: considered / signalled', (r) => `${r.summary.considered} / ${r.summary.signalled}`),
      ['worker peak resident (VmHWM)', (f) => `${f.memory.worker?.vmHwmMiB} MiB`],
    ]),
    '',
  );

  out.push('## 3. Registration', '');
  out.push(
    sideBySide(engines, (e) => e.parts.registration, [
      ['single registrations, at once', (f) => `${f.singles.count}, ${f.singles.concurrency}`],
      [
        'register → queryable p50 / p90 / p99 (goal p99 ≤ 500 ms)',
        (f) => `${f.singles.queryable.p50Ms} / ${f.singles.queryable.p90Ms} / ${f.singles.queryable.p99Ms} ms`,
      ],
      ['POST → 201 p50 / p99', (f) => `${f.singles.answered.p50Ms} / ${f.singles.answered.p99Ms} ms`],
      ['registrations/s', (f) => f.singles.perSecond],
      ['batch of 1,000: median time', (f) => `${f.batches.medianMs} ms (${f.batches.ms.join(', ')})`],
      ['batch items/s', (f) => f.batches.itemsPerSecond],
    ]),
    '',
  );

  for (const e of engines) {
    out.push(`## Details: ${NAMES[e.engine]}`, '');
    const any = e.parts.lifecycle ?? e.parts.refresh ?? e.parts.registration;
    if (any)
      out.push(
        table(
          ['', ''],
          Object.entries(any.environment).map(([k, v]) => [k, v]),
        ),
        '',
      );
    const l = e.parts.lifecycle;
    if (l) {
      out.push(`### Lifecycle (${loadLine(l)})`, '');
      out.push(
        table(
          ['phase', 'seconds', 'events/s', 'deliveries/s', 'CPU (cores)'],
          l.figures.events.phases.map((p) => [
            p.status,
            p.seconds,
            p.eventsPerSecond,
            p.deliveriesPerSecond,
            cpuCells(p.cpu, p.machineBusyPercent),
          ]),
        ),
        '',
        `Registration: ${l.figures.registration.seconds} s, batches ${l.figures.registration.batchMs.join(', ')} ms.`,
        '',
        memoryTable(l.figures.memory),
        '',
        ...(l.figures.workerMemoryReport ? [`Worker at the end: ${describeMemory(l.figures.workerMemoryReport)}.`, ''] : []),
        table(
          ['check', 'value'],
          Object.entries(l.figures.checks).map(([k, v]) => [k, String(v)]),
        ),
        '',
        'History events per dispatch by type (mean over the sample): ' +
          Object.entries(l.figures.historyEvents.byType ?? {})
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        '',
        'Largest tables: ' +
          Object.entries(l.figures.tableBytes)
            .map(([k, v]) => `${k} ${mib(v)}`)
            .join(', '),
        '',
      );
    }
    const r = e.parts.refresh;
    if (r) {
      out.push(`### Refresh (${loadLine(r)})`, '');
      out.push(
        `Seeded: history ${JSON.stringify(r.figures.historyRows)} (+${r.figures.changeRows} slower before run 2) in ${r.figures.seedSeconds.history} s; ` +
          `${r.figures.seeded} projection rows from ${r.figures.templates} templates in ${r.figures.seedSeconds.projection} s; ` +
          `${r.figures.registered} registered through the API in ${r.figures.seedSeconds.registration} s.`,
        '',
        table(
          [
            'run',
            'seconds',
            'summary',
            'rows read (updated or inserted) by table',
            'projections moved',
            'sampled history events',
            'settled after',
            'CPU (cores)',
          ],
          r.figures.runs.map((run) => [
            run.label,
            run.seconds,
            Object.entries(run.summary)
              .map(([k, v]) => `${k} ${v}`)
              .join(', '),
            Object.entries(run.tableRows)
              .filter(([, v]) => v.read || v.updated)
              .map(([k, v]) => `${k} ${v.read} (${v.updated})`)
              .join(', '),
            JSON.stringify(run.versionsMoved),
            run.sampledHistoryEvents,
            `${run.settleSeconds} s`,
            cpuCells(run.cpu, run.machineBusyPercent),
          ]),
        ),
        '',
        memoryTable(r.figures.memory),
        '',
        table(
          ['check', 'value'],
          Object.entries(r.figures.checks).map(([k, v]) => [k, String(v)]),
        ),
        '',
      );
    }
    const g = e.parts.registration;
    if (g) {
      out.push(`### Registration (${loadLine(g)})`, '');
      out.push(
        `CPU during the single registrations: ${cpuCells(g.figures.singles.cpu, g.figures.singles.machineBusyPercent)}; ` +
          `per registration (ms): ${perItem(g.figures.singles.cpu, g.figures.singles.perSecond)}. GETs answered 404 after a 201: ${g.figures.singles.notYetQueryable}.`,
        '',
        `Where a registration's time goes (ms after the POST, ${g.figures.singles.breakdownSample} sampled):`,
        '',
        table(
          ['step', 'p50', 'p99'],
          Object.entries(g.figures.singles.breakdown).map(([k, v]) => [k, v.p50Ms, v.p99Ms]),
        ),
        '',
      );
    }
  }
  return `${out.join('\n')}\n`;
}
