// Turns a webhook-latency run into its result: the latency figures against their goals, the
// throughput of ours beside the minimal workflow (medians over rounds, with each process's CPU),
// where the time of one webhook goes, and the markdown committed under results/ (the JSON beside
// it keeps every round and the per-second arrivals).
import { median } from '../status-read/report.js';
import { POINTS, type BreakdownRow } from './breakdown.js';
import { EMPTY_SHAPE, type LatencySummary, type ThroughputRun } from './phases.js';

type BreakdownPhase = { rows: BreakdownRow[]; historySample: number; databaseOnly: number };
type Cpu = { cores: Record<string, number>; machineBusyPercent: number };

export interface Result {
  date: string;
  settings: Record<string, string | number>;
  goals: { p50Ms: number; p99Ms: number; ratio: number };
  latency: LatencySummary;
  latencyCpu: Cpu;
  /** The same measure at a light rate (no queueing): what one event costs. */
  light: { summary: LatencySummary; cpu: Cpu };
  breakdown: Record<'light' | 'steady', BreakdownPhase> & { cold?: BreakdownPhase };
  throughput: ThroughputRun[];
  cold?: { summary: LatencySummary; cpu: Cpu };
  /**
   * Cold at a steady rate: dispatches registered, then the worker restarted (none in its cache), at
   * settings.coldRate/s right after the restart, then steps of rate on dispatches of their own.
   */
  coldSteady?: {
    summary: LatencySummary;
    cpu: Cpu;
    steps: Array<{ rate: number; summary: LatencySummary; cpu: Cpu }>;
    restart: { stopMs: number; readyMs: number };
    /** History events before the first carrier event of a cold dispatch: what the new worker replays. */
    replayedEvents: number;
    /** The restarted worker's resident memory after the cold phases (it loaded `workflowsLoaded`, its cache keeps at most WORKER_MAX_CACHED_WORKFLOWS). */
    workerMemory: { rssMiB: number; peakMiB: number; workflowsLoaded: number; report?: WorkerMemoryReport };
  };
  /** Workflow history events written per carrier event / signal. */
  historyEvents: Record<string, number>;
  checks: Record<string, string | number>;
  environment: Record<string, string | number>;
}

const round2 = (n: number) => Math.round(n * 100) / 100;
/** The processes shown beside each figure, in this order. */
const PROCESSES = ['worker', 'api', 'temporal', 'postgres', 'minimal worker', 'receiver', 'driver'];

export function throughputSummary(runs: ThroughputRun[]) {
  const of = (kind: string) => {
    const mine = runs.filter((r) => r.kind === kind);
    return {
      perSecond: Math.round(median(mine.map((r) => r.perSecond))),
      cores: Object.fromEntries(PROCESSES.map((p) => [p, round2(median(mine.map((r) => r.cpu.cores[p] ?? 0)))])),
      machineBusyPercent: Math.round(median(mine.map((r) => r.cpu.machineBusyPercent))),
      /** CPU milliseconds per delivery, per process (median over rounds). */
      cpuMsPerDelivery: Object.fromEntries(
        PROCESSES.map((p) => [p, Math.round(median(mine.map((r) => ((r.cpu.cores[p] ?? 0) * 1000) / r.perSecond)) * 10) / 10]),
      ),
    };
  };
  const ours = of('ours');
  const minimal = of('minimal');
  const rounds = [...new Set(runs.filter((r) => r.round > 0).map((r) => r.round))];
  const pairedTo = (kind: string) =>
    rounds.flatMap((round) => {
      const o = runs.find((r) => r.round === round && r.kind === 'ours');
      const m = runs.find((r) => r.round === round && r.kind === kind);
      return o && m ? [round2(o.perSecond / m.perSecond)] : [];
    });
  const paired = pairedTo('minimal');
  const shapeRatios = pairedTo(EMPTY_SHAPE);
  const shape = of(EMPTY_SHAPE);
  const variants = [...new Set(runs.filter((r) => r.kind !== 'ours' && r.kind !== 'minimal').map((r) => r.kind))].map((kind) => ({
    kind,
    ...of(kind),
  }));
  return {
    ours,
    minimal,
    shape,
    variants,
    ratio: round2(ours.perSecond / minimal.perSecond),
    pairedRatio: round2(median(paired)),
    shapeRatio: round2(ours.perSecond / shape.perSecond),
    shapeRatios,
  };
}

/** A row's label as this version words it (older JSON files keep the words of their run). */
const labelOf = (row: BreakdownRow) => POINTS.find(([point]) => point === row.point)?.[1] ?? row.label;
const cpuCells = (cores: Record<string, number>) => PROCESSES.map((p) => cores[p] ?? 0).join(' | ');
const meets = (ok: boolean) => (ok ? 'meets' : '**is below**');

export function toMarkdown(result: Result): string {
  const { latency, settings, goals } = result;
  const tp = throughputSummary(result.throughput);
  const latencyOk = latency.p50Ms <= goals.p50Ms && latency.p99Ms <= goals.p99Ms;
  const cpuHeader = `| ${PROCESSES.join(' | ')} |`;
  const lines = [
    `# Webhook latency and throughput — ${result.date}`,
    '',
    '## Latency: POST /v1/dispatches/{id}/events → first signed attempt at the receiver',
    '',
    `${settings.rate} events/s for ${settings.latencySeconds} s (after ${settings.latencyWarmupSeconds} s not counted), one ` +
      `\`in_transit\` per dispatch, each dispatch's workflow in the worker's cache.`,
    '',
    '| events | arrived | p50 ms | p90 ms | p99 ms | max ms | POST → 202 p50 / p99 ms |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${latency.events} | ${latency.arrived} | ${latency.p50Ms} | ${latency.p90Ms} | ${latency.p99Ms} | ${latency.maxMs} | ` +
      `${latency.acceptP50Ms} / ${latency.acceptP99Ms} |`,
    '',
    `Goal p50 ≤ ${goals.p50Ms} ms and p99 ≤ ${goals.p99Ms} ms: this run ${meets(latencyOk)} it.`,
    '',
    `At a light ${settings.lightRate} events/s (${result.light.summary.events} events): p50 ${result.light.summary.p50Ms} ms, ` +
      `p90 ${result.light.summary.p90Ms} ms, p99 ${result.light.summary.p99Ms} ms, max ${result.light.summary.maxMs} ms.`,
    '',
    `CPU during the measured window (cores; machine busy ${result.latencyCpu.machineBusyPercent} %):`,
    '',
    cpuHeader,
    `|${PROCESSES.map(() => ' ---: |').join('')}`,
    `| ${cpuCells(result.latencyCpu.cores)} |`,
    '',
    '## Throughput: sustained successful deliveries per second',
    '',
    `Closed loop, ${settings.inflight} events in flight from send to arrival; ${settings.throughputRounds} alternating rounds × ` +
      `${settings.throughputSeconds} s each after ${settings.throughputWarmupSeconds} s of warm-up; medians over rounds. Ours: ` +
      `carrier events through the API (${settings.throughputStatuses}); minimal: a signal straight to a workflow that runs one POST activity.`,
    '',
    `| workflow | deliveries/s | machine busy % | ${PROCESSES.join(' cores | ')} cores |`,
    `| --- | ---: | ---: |${PROCESSES.map(() => ' ---: |').join('')}`,
    `| ours (API → dispatch workflow → projection → delivery) | ${tp.ours.perSecond} | ${tp.ours.machineBusyPercent} | ${cpuCells(tp.ours.cores)} |`,
    `| minimal (signal → one POST activity) | ${tp.minimal.perSecond} | ${tp.minimal.machineBusyPercent} | ${cpuCells(tp.minimal.cores)} |`,
    '',
    `**Ours / minimal = ${tp.ratio}×** (median of per-round ratios ${tp.pairedRatio}×); the goal is ≥ ${goals.ratio}×, which this run ` +
      `${meets(tp.ratio >= goals.ratio)}.`,
    '',
    `**Ours / the design's empty shape (${EMPTY_SHAPE}, in every round) = ${tp.shapeRatio}×** (median ${tp.shape.perSecond}/s; ` +
      `per-round ratios ${tp.shapeRatios.join(', ')}); the goal is ≥ 0.9×, which this run ${meets(tp.shapeRatio >= 0.9)}.`,
    '',
    'CPU milliseconds per delivery:',
    '',
    `| workflow | ${PROCESSES.join(' | ')} |`,
    `| --- |${PROCESSES.map(() => ' ---: |').join('')}`,
    `| ours | ${cpuCells(tp.ours.cpuMsPerDelivery)} |`,
    `| minimal | ${cpuCells(tp.minimal.cpuMsPerDelivery)} |`,
    '',
    `Workflow history events per carrier event / signal: ${Object.entries(result.historyEvents)
      .map(([name, n]) => `${name} ${n}`)
      .join('; ')}.`,
    '',
    ...(tp.variants.length
      ? [
          "What the dispatch workflow's shape costs: the minimal workflow with its pieces added, one run each after the rounds " +
            '(CPU ms per delivery).',
          '',
          '| workflow | deliveries/s | Temporal ms | minimal worker ms | machine busy % |',
          '| --- | ---: | ---: | ---: | ---: |',
          ...[{ kind: 'minimal', ...tp.minimal }, ...tp.variants, { kind: 'ours', ...tp.ours }].map(
            (v) =>
              `| ${v.kind} | ${v.perSecond} | ${v.cpuMsPerDelivery.temporal} | ` +
              `${v.kind === 'ours' ? `${v.cpuMsPerDelivery.worker} (worker)` : v.cpuMsPerDelivery['minimal worker']} | ${v.machineBusyPercent} |`,
          ),
          '',
        ]
      : []),
    '| round | workflow | deliveries/s | sent | failed sends | ran out | per second |',
    '| ---: | --- | ---: | ---: | ---: | --- | --- |',
    ...result.throughput.map(
      (r) =>
        `| ${r.round || 'variant'} | ${r.kind} | ${r.perSecond} | ${r.sent} | ${r.failedSends} | ${r.exhausted ? 'yes' : 'no'} | ${r.series.join(' ')} |`,
    ),
    '',
    '## Where the time goes',
    '',
    `Each point in ms after the POST was sent, at ${settings.lightRate}/s (light: nothing queues) and at ${settings.rate}/s; the step ` +
      `is the median time from the previous point (the 202 aside). History points from ${result.breakdown.steady.historySample} ` +
      `evenly spaced events of each phase; database and receiver points from the same events.`,
    '',
    `| point | ${settings.lightRate}/s median ms | ${settings.lightRate}/s step | ${settings.rate}/s median ms | ${settings.rate}/s p99 ms | ${settings.rate}/s step |`,
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...result.breakdown.steady.rows.map((row) => {
      const l = result.breakdown.light.rows.find((r) => r.point === row.point);
      return `| ${labelOf(row)} | ${l?.medianMs ?? '–'} | ${l?.stepMedianMs ?? '–'} | ${row.medianMs} | ${row.p99Ms} | ${row.stepMedianMs} |`;
    }),
    '',
  ];
  if (result.coldSteady) {
    const cs = result.coldSteady;
    const c = cs.summary;
    const coldOk = c.p50Ms <= goals.p50Ms && c.p99Ms <= goals.p99Ms;
    const sustained = cs.steps.filter((s) => s.summary.arrived === s.summary.events && s.summary.p99Ms <= goals.p99Ms).at(-1);
    const row = (name: string, x: LatencySummary, cpu: Cpu) =>
      `| ${name} | ${x.events} | ${x.arrived} | ${x.p50Ms} | ${x.p90Ms} | ${x.p99Ms} | ${x.maxMs} | ${x.acceptP50Ms} / ${x.acceptP99Ms} | ` +
      `${cpu.cores.worker ?? 0} | ${cpu.cores.temporal ?? 0} | ${cpu.machineBusyPercent} |`;
    lines.push(
      '## Warm and cold side by side',
      '',
      `Cold: ${c.events + Number(settings.coldRate) * Number(settings.coldWarmupSeconds)} dispatches registered while one worker ran, that worker ` +
        `stopped with SIGTERM (graceful, ${cs.restart.stopMs} ms) and a new one started (polling ${cs.restart.readyMs} ms later), then one ` +
        `\`in_transit\` each at ${settings.coldRate}/s: no workflow is in the new worker's cache, each signal replays its history first ` +
        `(${cs.replayedEvents} events before the first carrier event). Then steps of rate, ${settings.coldStepSeconds} s each, on ` +
        `dispatches of their own (also never in this worker's cache).`,
      '',
      '| phase | events | arrived | p50 ms | p90 ms | p99 ms | max ms | POST → 202 p50 / p99 ms | worker cores | Temporal cores | machine busy % |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      row(`warm, ${settings.rate}/s`, latency, result.latencyCpu),
      row(`cold, ${settings.coldRate}/s after the restart`, c, cs.cpu),
      ...cs.steps.map((s) => row(`cold, ${s.rate}/s`, s.summary, s.cpu)),
      '',
      `Cold goal p50 ≤ ${goals.p50Ms} ms and p99 ≤ ${goals.p99Ms} ms at ${settings.coldRate}/s: this run ${meets(coldOk)} it. ` +
        (sustained
          ? `Highest step with every event arrived and p99 ≤ ${goals.p99Ms} ms: **${sustained.rate}/s**.`
          : `No step held p99 ≤ ${goals.p99Ms} ms.`) +
        ` The restarted worker after the cold phases (${cs.workerMemory.workflowsLoaded} workflows loaded, the cache keeps at most ` +
        `${settings.workerCache}): resident ${cs.workerMemory.rssMiB} MiB, peak ${cs.workerMemory.peakMiB} MiB` +
        (cs.workerMemory.report ? `; ${describeMemory(cs.workerMemory.report)}.` : '.'),
      '',
    );
    if (result.breakdown.cold) {
      lines.push(
        `Where the time goes, cold at ${settings.coldRate}/s (${result.breakdown.cold.historySample} evenly spaced events; the ` +
          'timed-out row counts the events whose first workflow task waited longer than the sticky schedule-to-start timeout ' +
          'of the worker that completed the previous one, and was scheduled again):',
        '',
        `| point | events | warm ${settings.rate}/s median ms | cold median ms | cold p99 ms | cold step |`,
        '| --- | ---: | ---: | ---: | ---: | ---: |',
        ...result.breakdown.cold.rows.map((row) => {
          const warm = result.breakdown.steady.rows.find((r) => r.point === row.point);
          return `| ${labelOf(row)} | ${row.events} | ${warm?.medianMs ?? '–'} | ${row.medianMs} | ${row.p99Ms} | ${row.stepMedianMs} |`;
        }),
        '',
      );
    }
  }
  if (result.cold) {
    const c = result.cold.summary;
    lines.push(
      '## Cold: the workflow no longer in the worker cache',
      '',
      `${c.events} \`out_for_delivery\` events at 10/s to the light-phase dispatches, evicted since (the worker caches ` +
        `2000 workflows): each signal makes the worker replay that workflow's history first.`,
      '',
      '| events | arrived | p50 ms | p90 ms | p99 ms | max ms |',
      '| ---: | ---: | ---: | ---: | ---: | ---: |',
      `| ${c.events} | ${c.arrived} | ${c.p50Ms} | ${c.p90Ms} | ${c.p99Ms} | ${c.maxMs} |`,
      '',
    );
  }
  lines.push(
    '## Checks',
    '',
    ...Object.entries(result.checks).map(([name, value]) => `- ${name}: ${value}`),
    '',
    '## Settings',
    '',
    ...Object.entries(result.settings).map(([name, value]) => `- ${name}: ${value}`),
    '',
    '## Environment',
    '',
    ...Object.entries(result.environment).map(([name, value]) => `- ${name}: ${value}`),
    '',
  );
  return lines.join('\n');
}

/** What the worker reports of its memory on SIGWINCH (worker-process.ts). */
export interface WorkerMemoryReport {
  rssMiB: number;
  peakMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  mainHeap: HeapReport;
  workflowThreadHeaps: HeapReport[];
  heapSnapshots: string[];
}

interface HeapReport {
  usedMiB: number;
  totalMiB: number;
  mallocedMiB: number;
  /** V8's heap_size_limit of the isolate (the old-space cap plus the young generation); absent in older results. */
  limitMiB?: number;
}

export function describeMemory(report: WorkerMemoryReport): string {
  const heap = (h: HeapReport) =>
    `${h.usedMiB} MiB used of ${h.totalMiB} MiB${h.limitMiB === undefined ? '' : ` (limit ${h.limitMiB} MiB)`}`;
  const heapsTotal = report.mainHeap.totalMiB + report.workflowThreadHeaps.reduce((sum, h) => sum + h.totalMiB, 0);
  return (
    `V8 heaps: main thread ${heap(report.mainHeap)}, workflow thread${report.workflowThreadHeaps.length > 1 ? 's' : ''} ` +
    `${report.workflowThreadHeaps.map(heap).join(', ')}; outside the V8 heaps ${report.rssMiB - heapsTotal} MiB ` +
    `(array buffers ${report.arrayBuffersMiB} MiB; the rest native: the SDK's Rust core, malloc)`
  );
}
