// Part 3: registration. `register → queryable` at a fixed number of concurrent registrations: from
// writing POST /v1/dispatches until GET /v1/status/{id} (sent once the 201 is in) answers 200,
// per dispatch; and batches of 1,000 through POST /v1/dispatches/batch, each timed alone. For a
// sample of single registrations, where the time went: the API's answer against the workflow
// history's start, first workflow task and update completion (fetchHistory timestamps).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { percentile } from '../webhook-latency/breakdown.js';
import { inParallel, startCpuMeter } from '../webhook-latency/load.js';
import { median } from '../status-read/report.js';
import { log, registerBatch, type Stack } from './setup.js';

export interface RegistrationSettings {
  singles: number;
  concurrency: number;
  batches: number;
  batchSize: number;
  historySample: number;
}

interface Timed {
  id: string;
  sentAt: number;
  answeredAt: number;
  queryableAt: number;
}

export interface RegistrationResult {
  singles: {
    count: number;
    concurrency: number;
    perSecond: number;
    queryable: { p50Ms: number; p90Ms: number; p99Ms: number; maxMs: number };
    answered: { p50Ms: number; p99Ms: number };
    /** GETs after the 201 that were not yet 200 (should be 0: the 201 comes after the projection). */
    notYetQueryable: number;
    cpu: Record<string, number>;
    machineBusyPercent: number;
    breakdown: Record<string, { p50Ms: number; p99Ms: number }>;
    breakdownSample: number;
  };
  batches: { size: number; ms: number[]; medianMs: number; itemsPerSecond: number; cpu: Record<string, number> };
}

const DESTINATIONS = [
  { postal_code: '10115', country_code: 'DE' },
  { postal_code: '28013', country_code: 'ES' },
  { postal_code: '75011', country_code: 'FR' },
];

export async function registrationPart(stack: Stack, settings: RegistrationSettings): Promise<RegistrationResult> {
  const { key } = await stack.newIssuer('Scale bench: registration');
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const timed: Timed[] = [];
  let notYetQueryable = 0;
  const ids = Array.from({ length: settings.singles }, () => randomUUID());
  const meter = startCpuMeter(stack.cpu);
  const perSecond = await inParallel(ids, settings.concurrency, async (id) => {
    const sentAt = performance.now();
    const response = await fetch(`${stack.apiUrl}/v1/dispatches`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id, destination: DESTINATIONS[timed.length % DESTINATIONS.length] }),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`registration answered ${response.status}`);
    const answeredAt = performance.now();
    for (;;) {
      const read = await fetch(`${stack.apiUrl}/v1/status/${id}`, { headers: { authorization: `Bearer ${key}` } });
      await read.arrayBuffer();
      if (read.status === 200) break;
      notYetQueryable += 1;
    }
    timed.push({ id, sentAt, answeredAt, queryableAt: performance.now() });
  });
  const cpu = meter();
  const queryable = timed.map((t) => t.queryableAt - t.sentAt);
  const answered = timed.map((t) => t.answeredAt - t.sentAt);
  log(
    `registration: ${ids.length} at ${settings.concurrency} at once, p50 ${Math.round(percentile(queryable, 0.5))} ms, p99 ${Math.round(percentile(queryable, 0.99))} ms`,
  );

  // Where the time went, for an even sample: epoch times of the history beside the driver's.
  const offset = Date.now() - performance.now();
  const step = Math.max(1, Math.floor(timed.length / settings.historySample));
  const sample = timed.filter((_, i) => i % step === 0).slice(0, settings.historySample);
  const rows: Array<Record<string, number>> = [];
  await inParallel(sample, 8, async (t) => void rows.push(await registrationPoints(stack.temporal, t, offset)));
  const steps = Object.keys(rows[0] ?? {});
  const breakdown = Object.fromEntries(
    steps.map((name) => {
      const values = rows.map((r) => r[name]).filter((v) => Number.isFinite(v));
      return [name, { p50Ms: Math.round(percentile(values, 0.5) * 10) / 10, p99Ms: Math.round(percentile(values, 0.99) * 10) / 10 }];
    }),
  );

  // Batches of batchSize, one after the other.
  const batchMeter = startCpuMeter(stack.cpu);
  const ms: number[] = [];
  for (let b = 0; b < settings.batches; b += 1) {
    const items = Array.from({ length: settings.batchSize }, (_, i) => ({
      id: randomUUID(),
      destination: DESTINATIONS[i % DESTINATIONS.length],
    }));
    ms.push(Math.round(await registerBatch(stack.apiUrl, key, items)));
    log(`registration: batch of ${settings.batchSize} in ${ms.at(-1)} ms`);
  }
  const batchCpu = batchMeter();
  return {
    singles: {
      count: ids.length,
      concurrency: settings.concurrency,
      perSecond,
      queryable: {
        p50Ms: Math.round(percentile(queryable, 0.5)),
        p90Ms: Math.round(percentile(queryable, 0.9)),
        p99Ms: Math.round(percentile(queryable, 0.99)),
        maxMs: Math.round(Math.max(...queryable)),
      },
      answered: { p50Ms: Math.round(percentile(answered, 0.5)), p99Ms: Math.round(percentile(answered, 0.99)) },
      notYetQueryable,
      cpu: cpu.cores,
      machineBusyPercent: cpu.machineBusyPercent,
      breakdown,
      breakdownSample: rows.length,
    },
    batches: {
      size: settings.batchSize,
      ms,
      medianMs: median(ms),
      itemsPerSecond: Math.round(settings.batchSize / (median(ms) / 1000)),
      cpu: batchCpu.cores,
    },
  };
}

/**
 * One registration's steps, in ms after the POST was written: the workflow's start, its first
 * workflow task scheduled, started and completed (the update's acceptance and the projection's local
 * activity run in it), the update completed, the 201, the 200 of the read.
 */
async function registrationPoints(temporal: Client, t: Timed, offset: number): Promise<Record<string, number>> {
  const history = await temporal.workflow.getHandle(t.id).fetchHistory();
  const events = history.events ?? [];
  const sent = t.sentAt + offset;
  const at = (predicate: (e: (typeof events)[number]) => boolean) => {
    const event = events.find(predicate);
    const time = event?.eventTime;
    return time ? Number(time.seconds) * 1000 + Math.round((time.nanos ?? 0) / 1e6) - sent : NaN;
  };
  return {
    'workflow started (history)': at((e) => e.workflowExecutionStartedEventAttributes != null),
    'first workflow task started (worker picked it up)': at((e) => e.workflowTaskStartedEventAttributes != null),
    'first workflow task completed (projection written in it)': at((e) => e.workflowTaskCompletedEventAttributes != null),
    'update completed (history)': at((e) => e.workflowExecutionUpdateCompletedEventAttributes != null),
    '201 at the driver': t.answeredAt - t.sentAt,
    'GET /v1/status 200 at the driver': t.queryableAt - t.sentAt,
  };
}
