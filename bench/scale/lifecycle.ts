// Part 1: N dispatches through their whole life, from outside as an issuer and a carrier feed would
// drive them. Registered through POST /v1/dispatches/batch (sequential batches), then three carrier
// events each through POST /v1/dispatches/{id}/events (in_transit for all, then out_for_delivery,
// then delivered), each phase a closed loop keeping a fixed number of events between the POST and
// the signed webhook's arrival at the receiver. One webhook endpoint, subscribed to
// status.updated: exactly 3 × N signed requests are expected, one per (dispatch, status), and
// every one is checked (count, status, signature, first attempt).
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { median } from '../status-read/report.js';
import { inParallel, sleep, startCpuMeter } from '../webhook-latency/load.js';
import type { WorkerMemoryReport } from '../webhook-latency/report.js';
import { startMemorySampler, type MemoryFigures } from './memory.js';
import { log, registerBatch, type Stack } from './setup.js';

export const LIFECYCLE_STATUSES = ['in_transit', 'out_for_delivery', 'delivered'] as const;

export interface LifecycleSettings {
  dispatches: number;
  batchSize: number;
  inflight: number;
  historySample: number;
}

export interface LifecycleResult {
  dispatches: number;
  totalSeconds: number;
  registration: { seconds: number; perSecond: number; batchMs: number[]; batchMedianMs: number };
  events: {
    phases: Array<{
      status: string;
      seconds: number;
      eventsPerSecond: number;
      deliveriesPerSecond: number;
      cpu: Record<string, number>;
      machineBusyPercent: number;
    }>;
    seconds: number;
    eventsPerSecond: number;
    deliveriesPerSecond: number;
    failedPosts: number;
  };
  checks: Record<string, number | string>;
  lost: number;
  memory: Record<string, MemoryFigures>;
  /** The worker's own report of where its memory is, at the end. */
  workerMemoryReport?: WorkerMemoryReport;
  historyEvents: { sampled: number; median: number; min: number; max: number; byType: Record<string, number> };
  databaseBytes: number;
  tableBytes: Record<string, number>;
  temporalStoreBytes: Record<string, number>;
}

export async function lifecyclePart(stack: Stack, settings: LifecycleSettings): Promise<LifecycleResult> {
  const { issuerId, key } = await stack.newIssuer('Scale bench: lifecycle');
  const endpoint = await createWebhookEndpoint(stack.pool, { issuerId, url: stack.receiverUrl, events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(`could not add the webhook endpoint: ${endpoint.reason}`);
  writeFileSync(stack.secretFile, endpoint.secret);
  const memory = startMemorySampler(stack.memory);
  const started = performance.now();

  // Registration: sequential batches, each item a whole registration (update-with-start).
  const ids = Array.from({ length: settings.dispatches }, () => randomUUID());
  const batchMs: number[] = [];
  const regStarted = performance.now();
  for (let i = 0; i < ids.length; i += settings.batchSize) {
    const items = ids.slice(i, i + settings.batchSize).map((id) => ({ id, destination: { postal_code: '75011', country_code: 'FR' } }));
    batchMs.push(Math.round(await registerBatch(stack.apiUrl, key, items)));
    log(`lifecycle: registered ${Math.min(i + settings.batchSize, ids.length)}/${ids.length} (batch ${batchMs.at(-1)} ms)`);
  }
  const regSeconds = (performance.now() - regStarted) / 1000;

  // Carrier events, one status at a time over every dispatch.
  const phases: LifecycleResult['events']['phases'] = [];
  let failedPosts = 0;
  const eventsStarted = performance.now();
  // occurred_at must move forward per dispatch: each phase's events are a minute apart.
  const base = Date.now() - 10 * 60_000;
  for (const [p, status] of LIFECYCLE_STATUSES.entries()) {
    const occurredAt = new Date(base + p * 60_000).toISOString();
    const arrivedBefore = stack.arrivals.first.size;
    const arrived = () => stack.arrivals.first.size - arrivedBefore;
    const meter = startCpuMeter(stack.cpu);
    const t0 = performance.now();
    let sent = 0;
    let lastAccepted = t0;
    // Closed loop: a sender waits while `inflight` events are between their POST and their webhook.
    await inParallel(ids, settings.inflight, async (id) => {
      while (sent - arrived() >= settings.inflight) await sleep(5);
      sent += 1;
      const response = await fetch(`${stack.apiUrl}/v1/dispatches/${id}/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ status, occurred_at: occurredAt }),
      });
      await response.arrayBuffer();
      lastAccepted = performance.now();
      if (response.status !== 202) {
        failedPosts += 1;
        sent -= 1;
      }
    });
    const allArrived = await stack.arrivals.until(() => ids.every((id) => stack.arrivals.first.has(`${id}|${status}`)), 300_000);
    const seconds = (performance.now() - t0) / 1000;
    const { cores, machineBusyPercent } = meter();
    phases.push({
      status,
      seconds: Math.round(seconds * 10) / 10,
      eventsPerSecond: Math.round(ids.length / ((lastAccepted - t0) / 1000)),
      deliveriesPerSecond: Math.round(arrived() / seconds),
      cpu: cores,
      machineBusyPercent,
    });
    log(`lifecycle: ${status} done in ${seconds.toFixed(1)} s (${arrived()} arrived${allArrived ? '' : ', SOME MISSING'})`);
  }
  const eventSeconds = (performance.now() - eventsStarted) / 1000;
  // Anything late (a retry, a duplicate) would arrive now.
  await sleep(3000);
  const totalSeconds = (performance.now() - started) / 1000;
  const memoryFigures = memory.stop();
  const workerMemoryReport = await stack.workerMemoryReport();

  let lost = 0;
  let wrongStatus = 0;
  for (const id of ids) for (const status of LIFECYCLE_STATUSES) if (!stack.arrivals.first.has(`${id}|${status}`)) lost += 1;
  for (const [k, arrival] of stack.arrivals.first) if (k.split('|')[1] !== arrival.status) wrongStatus += 1;
  const {
    rows: [db],
  } = await stack.pool.query<{ attempts: number; failed: number; events: number; delivered: number; carrier: number }>(
    `SELECT (SELECT count(*)::int FROM delivery_attempts) AS attempts,
            (SELECT count(*)::int FROM delivery_attempts WHERE error IS NOT NULL) AS failed,
            (SELECT count(*)::int FROM webhook_events) AS events,
            (SELECT count(*)::int FROM dispatches WHERE issuer_id = $1 AND status = 'delivered') AS delivered,
            (SELECT count(*)::int FROM carrier_events e JOIN dispatches d ON d.id = e.dispatch_id WHERE d.issuer_id = $1 AND e.effect = 'applied') AS carrier`,
    [issuerId],
  );

  // History length per dispatch, on an even sample.
  const step = Math.max(1, Math.floor(ids.length / settings.historySample));
  const sample = ids.filter((_, i) => i % step === 0).slice(0, settings.historySample);
  const lengths: number[] = [];
  // Event types of the sample's histories, per dispatch (what makes a history as long as it is).
  const byType: Record<string, number> = {};
  await inParallel(sample, 8, async (id) => {
    const history = await stack.temporal.workflow.getHandle(id).fetchHistory();
    lengths.push(history.events?.length ?? 0);
    for (const event of history.events ?? []) {
      const name = String(proto.temporal.api.enums.v1.EventType[event.eventType ?? 0]).replace(/^EVENT_TYPE_/, '');
      byType[name] = (byType[name] ?? 0) + 1 / sample.length;
    }
  });
  for (const name of Object.keys(byType)) byType[name] = Math.round(byType[name] * 10) / 10;

  const expected = LIFECYCLE_STATUSES.length * ids.length;
  const total = eventSeconds;
  return {
    dispatches: ids.length,
    totalSeconds: Math.round(totalSeconds),
    registration: {
      seconds: Math.round(regSeconds * 10) / 10,
      perSecond: Math.round(ids.length / regSeconds),
      batchMs,
      batchMedianMs: median(batchMs),
    },
    events: {
      phases,
      seconds: Math.round(total),
      eventsPerSecond: Math.round(expected / total),
      deliveriesPerSecond: Math.round(stack.arrivals.counts.ours / total),
      failedPosts,
    },
    lost,
    checks: {
      'signed requests expected (3 per dispatch)': expected,
      'signed requests received': stack.arrivals.counts.ours,
      '(dispatch, status) pairs received': stack.arrivals.first.size,
      'missing (dispatch, status) pairs': lost,
      'arrivals whose body status differs from the event sent': wrongStatus,
      'requests whose X-Service-Signature did not verify': stack.arrivals.unverified,
      'attempts after the first that reached the receiver': stack.arrivals.retries,
      'delivery attempts recorded / failed': `${db.attempts} / ${db.failed}`,
      'webhook events stored': db.events,
      'carrier events applied': db.carrier,
      'dispatches delivered in the projection': db.delivered,
      'event POSTs not answered 202': failedPosts,
    },
    memory: memoryFigures,
    workerMemoryReport,
    historyEvents: { sampled: lengths.length, median: median(lengths), min: Math.min(...lengths), max: Math.max(...lengths), byType },
    ...(await sizes(stack)),
  };
}

/** The application database's size and its largest tables, and the Temporal store's. */
export async function sizes(stack: Stack): Promise<Pick<LifecycleResult, 'databaseBytes' | 'tableBytes' | 'temporalStoreBytes'>> {
  const {
    rows: [{ bytes }],
  } = await stack.pool.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
  const { rows } = await stack.pool.query<{ relname: string; bytes: string }>(
    `SELECT relname, pg_total_relation_size(relid)::text AS bytes FROM pg_statio_user_tables ORDER BY pg_total_relation_size(relid) DESC LIMIT 8`,
  );
  return {
    databaseBytes: Number(bytes),
    tableBytes: Object.fromEntries(rows.map((r) => [r.relname, Number(r.bytes)])),
    temporalStoreBytes: await stack.engine.storeBytes(),
  };
}
