// The webhook-latency benchmark's load side, run in the driver process: the stream of arrivals the
// receiver process reports, the CPU meter over every process of the run, an open-loop sender at a
// steady rate (latency) and a closed-loop one that keeps a fixed number of events in flight from
// send to arrival (throughput).
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import { machineCpuSeconds } from '../status-read/processes.js';
import type { Arrival } from './receiver-process.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Arrivals at the receiver, as its process streams them: counts per kind and the first arrival per (dispatch, status). */
export class ArrivalStream extends EventEmitter {
  readonly counts = { ours: 0, minimal: 0 };
  /** `${dispatchId}|${status}` → the first status.updated attempt that arrived for it. */
  readonly first = new Map<string, Extract<Arrival, { kind: 'ours' }>>();
  retries = 0;
  unverified = 0;
  readonly ready: Promise<{ url: string }>;

  constructor(receiver: ChildProcess) {
    super();
    let onReady!: (value: { url: string }) => void;
    this.ready = new Promise((resolve) => (onReady = resolve));
    createInterface({ input: receiver.stdout! }).on('line', (line) => {
      const message = JSON.parse(line) as Arrival | { ready: true; url: string };
      if ('ready' in message) return onReady(message);
      this.counts[message.kind] += 1;
      if (message.kind === 'ours') {
        if (message.attempt > 1) this.retries += 1;
        if (!message.verified) this.unverified += 1;
        const key = `${message.dispatchId}|${message.status}`;
        if (message.event === 'status.updated' && !this.first.has(key)) this.first.set(key, message);
      }
      this.emit(message.kind);
    });
  }

  /** Resolves once `done()` holds, or after `timeoutMs`; false on timeout. */
  async until(done: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
    return true;
  }
}

/** CPU seconds of one process, read when called (from /proc, or process.cpuUsage() for the driver). */
export type CpuCounter = () => number;

/** Starts measuring: the returned function gives each counter's cores (CPU s / wall s) since then. */
export function startCpuMeter(counters: Record<string, CpuCounter>): () => { cores: Record<string, number>; machineBusyPercent: number } {
  const started = performance.now();
  const before = Object.fromEntries(Object.entries(counters).map(([name, read]) => [name, read()]));
  const machine = machineCpuSeconds();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const now = machineCpuSeconds();
    const cores = Object.fromEntries(
      Object.entries(counters).map(([name, read]) => [name, Math.round(((read() - before[name]) / seconds) * 100) / 100]),
    );
    return { cores, machineBusyPercent: Math.round((100 * (now.busy - machine.busy)) / (now.total - machine.total)) };
  };
}

export interface SentEvent {
  dispatchId: string;
  /** Date.now() just before the request was written, and when its answer came. */
  sentAt: number;
  answeredAt: number;
  httpStatus: number;
  /** The event's occurred_at as sent. */
  occurredAt: string;
}

/**
 * POSTs one carrier event through the API and times it. Its occurred_at is when it is sent, or
 * `occurredAt` (the same event again: a duplicate).
 */
export async function postCarrierEvent(
  apiUrl: string,
  key: string,
  dispatchId: string,
  status: string,
  occurredAt?: string,
): Promise<SentEvent> {
  const sentAt = Date.now();
  const occurred = occurredAt ?? new Date(sentAt).toISOString();
  const response = await fetch(`${apiUrl}/v1/dispatches/${dispatchId}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ status, occurred_at: occurred }),
  });
  await response.arrayBuffer();
  return { dispatchId, sentAt, answeredAt: Date.now(), httpStatus: response.status, occurredAt: occurred };
}

/** Runs `task` over `items` with at most `concurrency` at once; returns the items per second. */
export async function inParallel<T>(items: T[], concurrency: number, task: (item: T) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
  return Math.round(items.length / ((performance.now() - started) / 1000));
}

/**
 * Open loop: send(i) for i in 0..count-1 at `rate` per second on a fixed schedule, whatever the
 * answers do (no coordinated omission). Returns how late the sends were against the schedule.
 */
export async function steadyRate(rate: number, count: number, send: (i: number) => void): Promise<{ maxLagMs: number }> {
  const start = performance.now();
  let maxLagMs = 0;
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    maxLagMs = Math.max(maxLagMs, performance.now() - due);
    send(i);
  }
  return { maxLagMs: Math.round(maxLagMs) };
}

export interface ClosedLoopResult {
  /** Arrivals per second between the end of the warm-up and the end of the run. */
  perSecond: number;
  /** Arrivals in each whole second of the measured window. */
  series: number[];
  sent: number;
  failedSends: number;
  /** True when the run stopped early because it ran out of events to send. */
  exhausted: boolean;
  measuredSeconds: number;
}

/**
 * Closed loop: keeps `inflight` events between send and arrival at the receiver, sends the next
 * as each arrives, and counts arrivals of `kind` per second after `warmupS`. `send(j)` returns
 * false when there is nothing left to send. Waits for the in-flight events to drain before
 * returning, so that the next run starts on an idle system.
 */
export async function closedLoop(options: {
  arrivals: ArrivalStream;
  kind: 'ours' | 'minimal';
  inflight: number;
  warmupS: number;
  seconds: number;
  send: (j: number) => Promise<boolean>;
  onMeasureStart?: () => void;
  onMeasureEnd?: () => void;
}): Promise<ClosedLoopResult> {
  const { arrivals, kind } = options;
  const base = arrivals.counts[kind];
  let sent = 0;
  let failedSends = 0;
  let unsent = 0;
  let running = true;
  let exhausted = false;
  const outstanding = () => sent - failedSends - unsent - (arrivals.counts[kind] - base);
  const pump = () => {
    while (running && !exhausted && outstanding() < options.inflight) {
      const j = sent++;
      options.send(j).then(
        (more) => {
          if (!more) {
            exhausted = true;
            unsent += 1;
          }
        },
        () => (failedSends += 1),
      );
    }
  };
  arrivals.on(kind, pump);
  pump();
  await sleep(options.warmupS * 1000);
  options.onMeasureStart?.();
  const t0 = performance.now();
  const c0 = arrivals.counts[kind];
  const series: number[] = [];
  let last = c0;
  const ticker = setInterval(() => {
    series.push(arrivals.counts[kind] - last);
    last = arrivals.counts[kind];
  }, 1000);
  await arrivals.until(() => exhausted || performance.now() - t0 >= options.seconds * 1000, options.seconds * 1000 + 1000);
  const measuredSeconds = (performance.now() - t0) / 1000;
  const c1 = arrivals.counts[kind];
  options.onMeasureEnd?.();
  clearInterval(ticker);
  running = false;
  arrivals.off(kind, pump);
  await arrivals.until(() => outstanding() <= 0, 20_000);
  return {
    perSecond: Math.round((c1 - c0) / measuredSeconds),
    series,
    sent: sent - unsent,
    failedSends,
    exhausted,
    measuredSeconds: Math.round(measuredSeconds * 10) / 10,
  };
}
