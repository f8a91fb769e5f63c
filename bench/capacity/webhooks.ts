// What reached the capacity benchmark's receiver (bench/webhook-latency/receiver-process.ts, one JSON
// line per request): per card, when its first `status.updated` for each status arrived (the end of
// an event → webhook latency), how many webhooks it had, and signature failures.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { sleep } from '../webhook-latency/load.js';
import type { Arrival } from '../webhook-latency/receiver-process.js';

export class Webhooks {
  unverified = 0;
  /** Date.now() of the latest arrival. */
  lastAt = 0;
  /** `${dispatchId}|${status}` → Date.now() when its first status.updated arrived. */
  private readonly statusAt = new Map<string, number>();
  private readonly perDispatch = new Map<string, number>();
  readonly ready: Promise<{ url: string }>;

  constructor(receiver: ChildProcess) {
    let onReady!: (value: { url: string }) => void;
    this.ready = new Promise((resolve) => (onReady = resolve));
    createInterface({ input: receiver.stdout! }).on('line', (line) => {
      const message = JSON.parse(line) as Arrival | { ready: true; url: string };
      if ('ready' in message) return onReady(message);
      if (message.kind !== 'ours') return;
      this.lastAt = Date.now();
      if (!message.verified) this.unverified += 1;
      this.perDispatch.set(message.dispatchId, (this.perDispatch.get(message.dispatchId) ?? 0) + 1);
      const key = `${message.dispatchId}|${message.status}`;
      if (message.event === 'status.updated' && !this.statusAt.has(key)) this.statusAt.set(key, message.t);
    });
  }

  arrivedAt(dispatchId: string, status: string): number | undefined {
    return this.statusAt.get(`${dispatchId}|${status}`);
  }

  countFor(dispatchId: string): number {
    return this.perDispatch.get(dispatchId) ?? 0;
  }

  /** Once `done()` holds and nothing arrived for `quietMs`; false if `done()` does not hold within `timeoutMs`. */
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
