// What reached the event-cost benchmark's receiver: the webhook-latency benchmark's receiver process
// (bench/webhook-latency/receiver-process.ts, the tests' node:http receiver with the consumer kit's
// signature check) streams one JSON line per request; this keeps counts per event type, the
// (dispatch, event, status) triples seen, signature failures and retries.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { sleep } from '../webhook-latency/load.js';
import type { Arrival } from '../webhook-latency/receiver-process.js';

type Ours = Extract<Arrival, { kind: 'ours' }>;

export class Arrivals {
  total = 0;
  unverified = 0;
  retries = 0;
  /** Date.now() of the latest arrival. */
  lastAt = 0;
  readonly byType = new Map<string, number>();
  /** `${dispatchId}|${event}|${status}` seen at least once. */
  private readonly seen = new Set<string>();
  /** dispatchId → arrivals. */
  private readonly perDispatch = new Map<string, number>();
  readonly ready: Promise<{ url: string }>;

  constructor(receiver: ChildProcess) {
    let onReady!: (value: { url: string }) => void;
    this.ready = new Promise((resolve) => (onReady = resolve));
    createInterface({ input: receiver.stdout! }).on('line', (line) => {
      const message = JSON.parse(line) as Arrival | { ready: true; url: string };
      if ('ready' in message) return onReady(message);
      if (message.kind !== 'ours') return;
      this.record(message);
    });
  }

  private record(arrival: Ours): void {
    this.total += 1;
    this.lastAt = Date.now();
    if (!arrival.verified) this.unverified += 1;
    if (arrival.attempt > 1) this.retries += 1;
    this.byType.set(arrival.event, (this.byType.get(arrival.event) ?? 0) + 1);
    this.seen.add(`${arrival.dispatchId}|${arrival.event}|${arrival.status}`);
    this.perDispatch.set(arrival.dispatchId, (this.perDispatch.get(arrival.dispatchId) ?? 0) + 1);
  }

  has(dispatchId: string, event: string, status: string): boolean {
    return this.seen.has(`${dispatchId}|${event}|${status}`);
  }

  countFor(dispatchId: string): number {
    return this.perDispatch.get(dispatchId) ?? 0;
  }

  /** Counts per type since `before` (a copy of byType taken earlier). */
  typesSince(before: Map<string, number>): Record<string, number> {
    return Object.fromEntries([...this.byType].map(([type, n]) => [type, n - (before.get(type) ?? 0)]).filter(([, n]) => Number(n) > 0));
  }

  /**
   * Resolves once `done()` holds and nothing has arrived for `quietMs`; false if `done()` does not
   * hold within `timeoutMs`.
   */
  async settle(done: () => boolean, timeoutMs: number, quietMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
    while (Date.now() - this.lastAt < quietMs) await sleep(50);
    return true;
  }
}
