// The per-subject request counter behind the rate-limit middleware: fixed one-minute windows kept
// in Postgres (db/rate-limit.ts), so every API process shares them and the limit holds across
// processes: the shared count never passes the limit, and a request is admitted only against a
// counted slot. Two things keep this off the latency path:
// - coalescing: per subject, at most one counter write is in flight; requests arriving meanwhile
//   queue and are settled together by the next single write;
// - leases: for a key whose limit is very large (>= RATE_LIMIT_LEASE_FROM, 10,000 a minute), a write also claims a few
//   slots ahead (1% of the limit, at most 100), which later requests of this process use at once;
//   a refill is claimed when half are gone. Slots a process claimed but did not use count as used
//   (at most 1.5% of the limit per process and window), so with several processes a lease can
//   refuse a little early, never admit too many. At the default 1,000 a minute, and near any
//   limit, every request waits for its own count, so the limit is exact across processes.
// A refused request is never counted. Once a window is known to be full this process refuses
// without asking Postgres (counts only grow within a window).
import { addToWindow, deleteWindowsBefore } from '../db/rate-limit.js';
import { isDatabaseUnavailable, type Pool } from '../db/pool.js';
import type { Logger } from '../platform/logger.js';

export interface Admission {
  admitted: boolean;
  limit: number;
  remaining: number;
  /** End of the window, UTC epoch seconds. */
  resetAt: number;
}

const WINDOW_SECONDS = 60;
const CLEANUP_INTERVAL_MS = 60_000;
const MAX_LEASE = 100;

interface Subject {
  /** Requests waiting for the next write to count them. */
  waiting: Array<(admission: Admission) => void>;
  /** A write is in flight: new requests queue for the next one. */
  writing: boolean;
  /** Counted, unused slots this process holds for window `slotsWindow`. */
  slots: number;
  slotsWindow: number;
  /** The shared count after this process's last write, and its window. */
  count: number;
  countWindow: number;
  /** Start of a window known to be full. */
  fullWindow?: number;
}

export class RateLimiter {
  private readonly subjects = new Map<string, Subject>();
  private readonly lease: number;
  private cleanupTimer?: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    readonly limit: number,
    private readonly logger: Logger,
    leaseFromLimit: number,
  ) {
    this.lease = limit >= leaseFromLimit ? Math.min(MAX_LEASE, Math.floor(limit / 100)) : 0;
  }

  take(subjectKey: string): Promise<Admission> {
    const windowStart = currentWindow();
    let subject = this.subjects.get(subjectKey);
    if (!subject) {
      subject = { waiting: [], writing: false, slots: 0, slotsWindow: 0, count: 0, countWindow: 0 };
      this.subjects.set(subjectKey, subject);
    }
    if (subject.slots > 0 && subject.slotsWindow === windowStart) {
      subject.slots -= 1;
      if (subject.slots <= this.lease / 2 && !subject.writing) void this.write(subjectKey, subject);
      const remaining = Math.max(0, this.limit - subject.count + subject.slots);
      return Promise.resolve({ admitted: true, limit: this.limit, remaining, resetAt: windowStart + WINDOW_SECONDS });
    }
    if (subject.fullWindow === windowStart) return Promise.resolve(this.refused(windowStart));
    return new Promise((resolve) => {
      subject.waiting.push(resolve);
      if (!subject.writing) void this.write(subjectKey, subject);
    });
  }

  /** The refusal of `take`, without counting, when this process knows the subject's window is full; else undefined. */
  knownFull(subjectKey: string): Admission | undefined {
    const windowStart = currentWindow();
    return this.subjects.get(subjectKey)?.fullWindow === windowStart ? this.refused(windowStart) : undefined;
  }

  /**
   * Counts up to `count` more requests at once (a batch's items beyond the request itself), never
   * past the limit; returns how many were granted and the window after them. Refused ones leave no
   * trace, as a refused request does.
   */
  async takeMany(subjectKey: string, count: number): Promise<{ granted: number; admission: Admission }> {
    const windowStart = currentWindow();
    const resetAt = windowStart + WINDOW_SECONDS;
    const subject = this.subjects.get(subjectKey);
    if (subject?.fullWindow === windowStart) return { granted: 0, admission: this.refused(windowStart) };
    try {
      const { before, after } = await addToWindow(this.pool, subjectKey, windowStart, count, this.limit);
      if (subject && (subject.countWindow !== windowStart || subject.count < after)) {
        subject.count = after;
        subject.countWindow = windowStart;
      }
      if (subject && after >= this.limit) subject.fullWindow = windowStart;
      const granted = after - before;
      return { granted, admission: { admitted: granted === count, limit: this.limit, remaining: this.limit - after, resetAt } };
    } catch (error) {
      this.logFailure(error, subjectKey);
      return { granted: count, admission: { admitted: true, limit: this.limit, remaining: this.limit, resetAt } };
    }
  }

  /**
   * Starts forgetting ended windows once a minute: this process's view of them, and, with
   * `deleteOldWindows`, their rows (any process may; the DELETE is idempotent and covers every
   * limiter's subjects, so one limiter per process is enough to run it).
   */
  startCleanup(deleteOldWindows = true): void {
    this.cleanupTimer ??= setInterval(() => {
      const windowStart = currentWindow();
      if (deleteOldWindows) {
        deleteWindowsBefore(this.pool, windowStart - WINDOW_SECONDS).catch((error) =>
          this.logger.warn({ err: error }, 'could not delete old rate-limit windows'),
        );
      }
      for (const [key, subject] of this.subjects) {
        const idle = !subject.writing && subject.waiting.length === 0;
        if (idle && subject.countWindow < windowStart && subject.fullWindow !== windowStart) this.subjects.delete(key);
      }
    }, CLEANUP_INTERVAL_MS).unref();
  }

  stopCleanup(): void {
    clearInterval(this.cleanupTimer);
    this.cleanupTimer = undefined;
  }

  /** A failed count, logged unless it is the database being unreachable: the pool says that once (db/pool.ts). */
  private logFailure(error: unknown, subjectKey: string): void {
    if (!isDatabaseUnavailable(error)) this.logger.error({ err: error, subject: subjectKey }, 'rate-limit counter unavailable; admitting');
  }

  private async write(subjectKey: string, subject: Subject): Promise<void> {
    subject.writing = true;
    const batch = subject.waiting;
    subject.waiting = [];
    const windowStart = currentWindow();
    const resetAt = windowStart + WINDOW_SECONDS;
    if (subject.slotsWindow !== windowStart) subject.slots = 0; // counted in a window that has ended
    const known = subject.countWindow === windowStart ? subject.count : 0;
    const lease = known + batch.length + this.lease <= this.limit ? this.lease : 0;
    if (batch.length + lease === 0) {
      subject.writing = false;
      return;
    }
    try {
      const { before, after } = await addToWindow(this.pool, subjectKey, windowStart, batch.length + lease, this.limit);
      const granted = after - before;
      subject.count = after;
      subject.countWindow = windowStart;
      if (after >= this.limit) subject.fullWindow = windowStart;
      batch.forEach((resolve, i) => {
        const admitted = i < granted;
        resolve({ admitted, limit: this.limit, remaining: admitted ? this.limit - (before + i + 1) : 0, resetAt });
      });
      subject.slots += Math.max(0, granted - batch.length);
      subject.slotsWindow = windowStart;
    } catch (error) {
      // Without the shared counter, serve rather than refuse: the database outage shows elsewhere.
      this.logFailure(error, subjectKey);
      for (const resolve of batch) resolve({ admitted: true, limit: this.limit, remaining: this.limit, resetAt });
    } finally {
      subject.writing = false;
      // Requests that queued during the write take fresh slots first; the rest need a write.
      while (subject.waiting.length > 0 && subject.slots > 0 && subject.slotsWindow === currentWindow()) {
        subject.slots -= 1;
        const remaining = Math.max(0, this.limit - subject.count + subject.slots);
        subject.waiting.shift()!({ admitted: true, limit: this.limit, remaining, resetAt: subject.slotsWindow + WINDOW_SECONDS });
      }
      if (subject.waiting.length > 0) void this.write(subjectKey, subject);
    }
  }

  private refused(windowStart: number): Admission {
    return { admitted: false, limit: this.limit, remaining: 0, resetAt: windowStart + WINDOW_SECONDS };
  }
}

function currentWindow(): number {
  const seconds = Math.floor(Date.now() / 1000);
  return seconds - (seconds % WINDOW_SECONDS);
}
