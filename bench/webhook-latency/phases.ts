// The measured phases of the webhook-latency benchmark: latency at a steady rate (warm workflows),
// throughput of ours beside the minimal workflow (closed loop, alternating rounds), and the latency
// of a few events to workflows no longer in the worker's cache (cold).
import type { Client } from '@temporalio/client';
import { percentile } from './breakdown.js';
import { pingSignal, type Shape } from './minimal-workflow.js';
import {
  closedLoop,
  postCarrierEvent,
  startCpuMeter,
  steadyRate,
  type ArrivalStream,
  type ClosedLoopResult,
  type CpuCounter,
  type SentEvent,
} from './load.js';

export interface Target {
  apiUrl: string;
  key: string;
  arrivals: ArrivalStream;
  counters: Record<string, CpuCounter>;
}

export interface LatencySummary {
  events: number;
  arrived: number;
  failedSends: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** POST → 202 at the sender. */
  acceptP50Ms: number;
  acceptP99Ms: number;
  maxSendLagMs: number;
}

export interface LatencyPhase {
  summary: LatencySummary;
  cpu: ReturnType<ReturnType<typeof startCpuMeter>>;
  /** The measured events that arrived, with their times, for the breakdown. */
  measured: Array<SentEvent & { arrivedAt: number }>;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * Sends `status` to each dispatch once, at `rate` per second (open loop), and times each from the
 * POST to the first status.updated attempt arriving. The first `warmup` events are not counted.
 */
export async function latencyPhase(target: Target, ids: string[], options: { rate: number; warmup: number; status: string }) {
  const sends: Array<SentEvent | undefined> = new Array(ids.length);
  let failedSends = 0;
  let stopMeter: ReturnType<typeof startCpuMeter> | undefined;
  const { maxLagMs } = await steadyRate(options.rate, ids.length, (i) => {
    if (i === options.warmup) stopMeter = startCpuMeter(target.counters);
    postCarrierEvent(target.apiUrl, target.key, ids[i], options.status).then(
      (sent) => {
        sends[i] = sent;
        if (sent.httpStatus !== 202) failedSends += 1;
      },
      () => (failedSends += 1),
    );
  });
  const cpu = stopMeter ? stopMeter() : startCpuMeter(target.counters)();
  const key = (id: string) => `${id}|${options.status}`;
  // Over capacity, the backlog drains after the last send: wait for it, within bounds.
  await target.arrivals.until(() => ids.every((id) => target.arrivals.first.has(key(id))), 90_000);

  const measured: LatencyPhase['measured'] = [];
  for (let i = options.warmup; i < ids.length; i++) {
    const sent = sends[i];
    const arrival = target.arrivals.first.get(key(ids[i]));
    if (sent && arrival) measured.push({ ...sent, arrivedAt: arrival.t });
  }
  const latencies = measured.map((e) => e.arrivedAt - e.sentAt);
  const accepts = measured.map((e) => e.answeredAt - e.sentAt);
  const summary: LatencySummary = {
    events: ids.length - options.warmup,
    arrived: measured.length,
    failedSends,
    p50Ms: round1(percentile(latencies, 0.5)),
    p90Ms: round1(percentile(latencies, 0.9)),
    p99Ms: round1(percentile(latencies, 0.99)),
    maxMs: round1(Math.max(...latencies)),
    acceptP50Ms: round1(percentile(accepts, 0.5)),
    acceptP99Ms: round1(percentile(accepts, 0.99)),
    maxSendLagMs: maxLagMs,
  };
  return { summary, cpu, measured } satisfies LatencyPhase;
}

export interface ThroughputRun extends ClosedLoopResult {
  round: number;
  kind: string;
  cpu: ReturnType<ReturnType<typeof startCpuMeter>>;
}

/** The statuses each throughput dispatch goes through, one status.updated each. */
export const THROUGHPUT_STATUSES = ['in_transit', 'out_for_delivery', 'delivered'] as const;

/** The minimal workflow with pieces of the dispatch workflow's shape added (see minimal-workflow.ts). */
export const MINIMAL_VARIANTS: Record<string, Shape> = {
  'minimal + search-attribute upsert': { searchAttributes: true },
  'minimal + a first activity': { firstActivity: true },
  'minimal + both (the dispatch workflow shape)': { searchAttributes: true, firstActivity: true },
  'minimal + both, the first activity local': { searchAttributes: true, firstActivity: true, local: true },
};

/** The design's own empty shape: the reference of the deliveries-per-second goal (bench/webhook-latency/README.md). */
export const EMPTY_SHAPE = 'minimal + both, the first activity local';

/**
 * Alternating rounds (ours, minimal, then minimal, ours, …) of a closed loop with `inflight`
 * events between send and arrival, then one run of each of MINIMAL_VARIANTS when asked. Ours:
 * carrier events through the API to the dispatch workflows `ids`, each going through
 * THROUGHPUT_STATUSES in turn. Minimal: a signal from this process to one of `minimalIds`.
 */
export async function throughputRounds(
  target: Target,
  temporal: Client,
  ids: string[],
  minimalIds: string[],
  options: { rounds: number; inflight: number; warmupS: number; seconds: number; variants: boolean },
): Promise<ThroughputRun[]> {
  let oursCursor = 0;
  let minimalCursor = 0;
  const ours = async () => {
    const j = oursCursor++;
    if (j >= ids.length * THROUGHPUT_STATUSES.length) return false;
    const sent = await postCarrierEvent(target.apiUrl, target.key, ids[j % ids.length], THROUGHPUT_STATUSES[Math.floor(j / ids.length)]);
    if (sent.httpStatus !== 202) throw new Error(`API answered ${sent.httpStatus}`);
    return true;
  };
  const minimal = (shape: Shape) => async () => {
    await temporal.workflow.getHandle(minimalIds[minimalCursor++ % minimalIds.length]).signal(pingSignal, shape);
    return true;
  };
  const plan: Array<{ round: number; kind: string; send: () => Promise<boolean> }> = [];
  // Each round: ours, the minimal workflow and the design's empty shape (its goal's reference), in
  // alternating order; the other variants once after the rounds.
  for (let round = 1; round <= options.rounds; round++) {
    const trio = [
      { round, kind: 'ours', send: ours },
      { round, kind: 'minimal', send: minimal({}) },
      { round, kind: EMPTY_SHAPE, send: minimal(MINIMAL_VARIANTS[EMPTY_SHAPE]) },
    ];
    plan.push(...(round % 2 ? trio : trio.reverse()));
  }
  if (options.variants) {
    for (const [kind, shape] of Object.entries(MINIMAL_VARIANTS))
      if (kind !== EMPTY_SHAPE) plan.push({ round: 0, kind, send: minimal(shape) });
  }

  const runs: ThroughputRun[] = [];
  for (const { round, kind, send } of plan) {
    let stopMeter: ReturnType<typeof startCpuMeter> | undefined;
    let cpu: ThroughputRun['cpu'] | undefined;
    const result = await closedLoop({
      arrivals: target.arrivals,
      kind: kind === 'ours' ? 'ours' : 'minimal',
      inflight: options.inflight,
      warmupS: options.warmupS,
      seconds: options.seconds,
      send,
      onMeasureStart: () => (stopMeter = startCpuMeter(target.counters)),
      onMeasureEnd: () => (cpu = stopMeter!()),
    });
    runs.push({ round, kind, ...result, cpu: cpu! });
    process.stderr.write(
      `[bench] throughput ${round ? `round ${round}` : 'variant'} ${kind}: ${result.perSecond}/s${result.exhausted ? ' (ran out of events)' : ''}\n`,
    );
  }
  return runs;
}
