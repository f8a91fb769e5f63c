// "Nothing accepted is ever lost, a 2xx promises action" (DESIGN §6) when the API process itself is
// killed with SIGKILL in the middle of a request, and the client, which got no answer, sends the
// same request again (docs/design.md "What a killed API process keeps"). The API is a real process (api/main.ts), the worker too (test/support/worker-process.ts);
// each kill is timed from outside: by the projection (a batch part-way through), by Temporal (a
// registration's workflow started, its worker not yet running), by the carrier-event log with the
// process's way to Temporal held (an event logged, its signal not sent), and at random points.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { derivedDispatchId, idempotencyRequestHash } from '../../api/idempotency.js';
import { freePort } from '../../devtools/postgres.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { bearer, registrationFor, request, type TestResponse } from '../api/http.js';
import { randomId, requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint, whenReady } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let h: Harness;
let receiver: Receiver;
let issuerId: string;
let key: string;
const children: ChildProcess[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  h = await startHarness({ worker: false, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  issuerId = await h.createIssuer('API Crash Issuer');
  key = (await h.createKey(issuerId)).key;
  const created = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated', 'delivery.predicted'] });
  if (!created.ok) throw new Error(created.reason);
}, 60_000);

afterEach(async () => {
  for (const child of children.splice(0)) await kill(child);
  for (const proxy of proxies.splice(0)) await proxy.close();
});

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** The product's worker in a process of its own, on the harness's task queue. */
async function startWorker(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test', 'support', 'worker-process.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? ROOT,
      DATABASE_URL: h.config.DATABASE_URL!,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      TEST_WORKFLOW_BUNDLE: requireTestEnv('TEST_WORKFLOW_BUNDLE'),
      TEST_WORKER_NAME: randomId('api-crash-worker'),
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  await whenReady(child, 'worker ready', 'the worker');
}

/** An API process (api/main.ts) on the harness's database and task queue; its Temporal may be a proxy's address. */
async function startApi(temporalAddress = h.config.TEMPORAL_ADDRESS!): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const api = await startEntryPoint(
    'api/main.ts',
    {
      DATABASE_URL: h.config.DATABASE_URL!,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info', // 'API listening' is an info line
    },
    'API listening',
  );
  children.push(api.child);
  return { child: api.child, url: `http://127.0.0.1:${port}` };
}

/** Sends a request whose process will be killed: resolves with the response, or the error of the connection it died with. */
const doomed = (url: string, pathname: string, body: unknown, headers: Record<string, string> = {}) =>
  request(url, pathname, { headers: { ...bearer(key), ...headers }, body }).catch((error: Error) => error);

/**
 * Sends a request as a client that got no answer does: again while the key is still held by the
 * dead process (409 "still in progress", with Retry-After), once a second, until another answer.
 * Returns that answer and how many 409s came first.
 */
async function retried(send: () => Promise<TestResponse>): Promise<TestResponse & { conflicts: number }> {
  const deadline = Date.now() + 30_000;
  for (let conflicts = 0; ; conflicts++) {
    const res = await send();
    const inProgress = res.status === 409 && /still in progress/.test(res.body?.message);
    if (!inProgress || Date.now() > deadline) return { ...res, conflicts };
    expect(res.headers['retry-after']).toBe('10');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** The webhooks the receiver got for a dispatch, as `event:status`, each request once. */
const webhooksFor = (id: string) =>
  receiver.requests
    .map((r) => JSON.parse(r.body.toString('utf8')))
    .filter((body) => body.data?.id === id)
    .map((body) => `${body.event}:${body.data.status}`);

/** Waits until no webhook arrived for 2 s. */
async function webhooksSettled(): Promise<void> {
  let count = -1;
  await until(
    async () => {
      const quiet = receiver.requests.length === count;
      count = receiver.requests.length;
      await new Promise((resolve) => setTimeout(resolve, 2000));
      return quiet && receiver.requests.length === count;
    },
    'the webhooks to settle',
    60_000,
  );
}

/** Webhook events made for each of the dispatches, by type: `{ id: { type: n } }`. */
async function webhookEventCounts(ids: string[]): Promise<Map<string, Record<string, number>>> {
  const { rows } = await h.pool.query(
    'SELECT dispatch_id::text AS id, type, count(*)::int AS n FROM webhook_events WHERE dispatch_id = ANY($1::uuid[]) GROUP BY 1, 2',
    [ids],
  );
  const counts = new Map<string, Record<string, number>>(ids.map((id) => [id, {}]));
  for (const row of rows) counts.get(row.id)![row.type] = row.n;
  return counts;
}

const dispatchRows = async (ids: string[]) =>
  (await h.pool.query('SELECT id::text FROM dispatches WHERE id = ANY($1::uuid[])', [ids])).rows.map((row) => row.id as string);

describe('the API killed with SIGKILL during a registration, then the same request again', () => {
  it('POST /v1/dispatches/batch of 200 with an Idempotency-Key, killed part-way: the retry names every dispatch once, each made once', async () => {
    await startWorker();
    const tag = randomId('crash-batch');
    // Even items name their id, odd ones get the id derived from the key and their index.
    const items = Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0
        ? registrationFor(randomUUID(), { reference: `${tag}-${i}` })
        : { destination: { postal_code: '10115', country_code: 'DE' }, reference: `${tag}-${i}` },
    );
    const body = { dispatches: items };
    const idempotencyKey = randomId('batch-key');
    const hash = idempotencyRequestHash('POST', '/v1/dispatches/batch', body);
    const ids = items.map((item, i) =>
      'id' in item ? (item.id as string) : derivedDispatchId({ issuerId, mode: 'live', key: idempotencyKey }, hash, i),
    );

    const first = await startApi();
    const interrupted = doomed(first.url, '/v1/dispatches/batch', body, { 'idempotency-key': idempotencyKey });
    await until(async () => (await dispatchRows(ids)).length >= 20, 'some of the batch to be registered', 30_000);
    await kill(first.child);
    expect(await interrupted).not.toHaveProperty('status'); // no answer: the client must retry
    const before = (await dispatchRows(ids)).length;
    expect(before).toBeLessThan(200);

    const second = await startApi();
    const retry = await retried(() => request(second.url, '/v1/dispatches/batch', { headers: { ...bearer(key), 'idempotency-key': idempotencyKey }, body })); // prettier-ignore
    expect(retry.status).toBe(200);
    expect(retry.conflicts).toBeLessThanOrEqual(11); // the dead process's claim lapses within its 10 s lease
    const results = retry.body.results as Array<{ index: number; result: string; id: string }>;
    expect(results.map((r) => r.id)).toEqual(ids);
    expect(new Set(results.map((r) => r.id)).size).toBe(200);
    expect(results.filter((r) => r.result !== 'created' && r.result !== 'existing')).toEqual([]);
    // What the dead process had started is `existing` (docs/http-contract.md "Idempotency-Key"), the rest `created`.
    expect(results.filter((r) => r.result === 'created').length).toBeGreaterThan(0);
    expect((await dispatchRows(ids)).length).toBe(200);
    const { rows } = await h.pool.query('SELECT count(*)::int AS n FROM dispatches WHERE reference LIKE $1', [`${tag}-%`]);
    expect(rows[0].n).toBe(200);

    // The same key again: the retry's answer, replayed.
    const replayed = await request(second.url, '/v1/dispatches/batch', { headers: { ...bearer(key), 'idempotency-key': idempotencyKey }, body }); // prettier-ignore
    expect(replayed.status).toBe(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.text).toBe(retry.text);

    await until(() => ids.every((id) => webhooksFor(id).length >= 1), 'a delivery.predicted webhook for every dispatch', 60_000);
    await webhooksSettled();
    for (const id of ids) expect([id, webhooksFor(id)]).toEqual([id, ['delivery.predicted:dispatched']]);
    for (const [id, types] of await webhookEventCounts(ids)) expect([id, types]).toEqual([id, { 'delivery.predicted': 1 }]);

    // Without the key (docs/http-contract.md "POST /v1/dispatches/batch"): idempotent by id only, so
    // the items that name theirs are `existing`, and those without get new ids: new dispatches.
    const unkeyed = await request(second.url, '/v1/dispatches/batch', { headers: bearer(key), body });
    expect(unkeyed.status).toBe(200);
    const again = unkeyed.body.results as Array<{ result: string; id: string }>;
    expect(again.filter((_, i) => i % 2 === 0)).toEqual(ids.filter((_, i) => i % 2 === 0).map((id) => ({ index: expect.any(Number), result: 'existing', id }))); // prettier-ignore
    const fresh = again.filter((_, i) => i % 2 === 1);
    expect(fresh.every((r) => r.result === 'created' && !ids.includes(r.id))).toBe(true);
  }, 120_000);
});

describe('the API killed with SIGKILL between the workflow start and the 201', () => {
  it('POST /v1/dispatches with an Idempotency-Key and no id: the retry gets the same dispatch, made once, its webhook once', async () => {
    // No worker yet: the workflow starts and waits for one, so the registration cannot be answered.
    const body = { destination: { postal_code: '1010', country_code: 'AT' }, reference: randomId('crash-single') };
    const idempotencyKey = randomId('single-key');
    const id = derivedDispatchId({ issuerId, mode: 'live', key: idempotencyKey }, idempotencyRequestHash('POST', '/v1/dispatches', body));
    const first = await startApi();
    const interrupted = doomed(first.url, '/v1/dispatches', body, { 'idempotency-key': idempotencyKey });
    await until(
      () => h.temporal.workflow.getHandle(id).describe().then(() => true, () => false), // prettier-ignore
      'the workflow to be started',
      30_000,
    );
    await kill(first.child);
    expect(await interrupted).not.toHaveProperty('status');

    await startWorker();
    const second = await startApi();
    const retry = await retried(() => request(second.url, '/v1/dispatches', { headers: { ...bearer(key), 'idempotency-key': idempotencyKey }, body })); // prettier-ignore
    expect(retry.conflicts).toBeLessThanOrEqual(11);
    // The dead process's workflow start registered it: the retry's registration is a repeat (200),
    // or, when its own update reached the workflow first, the one that made it (201).
    expect([200, 201]).toContain(retry.status);
    expect(retry.body.id).toBe(id);
    expect(retry.headers.location).toBe(retry.status === 201 ? `/v1/status/${id}` : undefined);
    const replayed = await request(second.url, '/v1/dispatches', { headers: { ...bearer(key), 'idempotency-key': idempotencyKey }, body });
    expect([replayed.status, replayed.headers['idempotent-replayed'], replayed.text]).toEqual([retry.status, 'true', retry.text]);

    const { rows } = await h.pool.query('SELECT id::text FROM dispatches WHERE reference = $1', [body.reference]);
    expect(rows).toEqual([{ id }]);
    await until(() => webhooksFor(id).length >= 1, 'the delivery.predicted webhook');
    await webhooksSettled();
    expect(webhooksFor(id)).toEqual(['delivery.predicted:dispatched']);
    expect(await webhookEventCounts([id])).toEqual(new Map([[id, { 'delivery.predicted': 1 }]]));
  }, 60_000);
});

describe('the API killed with SIGKILL during POST /v1/dispatches/{id}/events, then the same event again', () => {
  async function registered(): Promise<string> {
    const id = randomUUID();
    const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(id) });
    expect(res.status).toBe(201);
    return id;
  }

  /** Expects the dispatch to be in transit by exactly one applied event, with one status.updated made and sent. */
  async function appliedOnce(id: string): Promise<void> {
    await until(() => webhooksFor(id).includes('status.updated:in_transit'), 'the status.updated webhook');
    await webhooksSettled();
    expect(webhooksFor(id).filter((w) => w.startsWith('status.updated'))).toEqual(['status.updated:in_transit']);
    expect((await webhookEventCounts([id])).get(id)).toMatchObject({ 'status.updated': 1 });
    const { rows } = await h.pool.query('SELECT status, effect FROM carrier_events WHERE dispatch_id = $1', [id]);
    expect(rows).toEqual([{ status: 'in_transit', effect: 'applied' }]);
    expect((await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) })).body.status).toBe('in_transit');
  }

  for (const withEventId of [true, false]) {
    it(`killed after the event's log insert, before its signal (${withEventId ? 'with' : 'without'} event_id): the retry applies it once, one webhook`, async () => {
      await startWorker();
      const id = await registered();
      const event = { status: 'in_transit', occurred_at: new Date().toISOString(), ...(withEventId ? { event_id: randomId('scan') } : {}) };
      const proxy = await startTcpProxy(h.config.TEMPORAL_ADDRESS!);
      proxies.push(proxy);
      const first = await startApi(proxy.address);
      proxy.hold(); // the signal will not reach Temporal
      const interrupted = doomed(first.url, `/v1/dispatches/${id}/events`, event);
      await until(async () => {
        const { rows } = await h.pool.query('SELECT 1 FROM carrier_events WHERE dispatch_id = $1', [id]);
        return rows.length === 1;
      }, 'the event to be logged');
      await new Promise((resolve) => setTimeout(resolve, 200)); // the process now waits on the held signal
      await kill(first.child);
      expect(await interrupted).not.toHaveProperty('status');
      // Logged, never signalled: not applied.
      expect((await h.pool.query('SELECT effect FROM carrier_events WHERE dispatch_id = $1', [id])).rows).toEqual([{ effect: null }]);

      const retried = await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body: event });
      expect(retried.status).toBe(202);
      expect(retried.body).toEqual({ accepted: true, duplicate: true });
      await appliedOnce(id);
    }, 60_000);
  }

  it('killed at a random point of the request, three times: each retry ends with its event applied once, one webhook', async () => {
    await startWorker();
    for (let round = 0; round < 3; round++) {
      const id = await registered();
      const event = { status: 'in_transit', occurred_at: new Date().toISOString(), event_id: randomId('scan') };
      const first = await startApi();
      const interrupted = doomed(first.url, `/v1/dispatches/${id}/events`, event);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 60)));
      await kill(first.child);
      const answer = await interrupted;
      const retried = await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body: event });
      expect(retried.status).toBe(202);
      // A first request that was answered, or got as far as the log, makes the retry a duplicate.
      if ((answer as TestResponse).status === 202) expect(retried.body.duplicate).toBe(true);
      await appliedOnce(id);
    }
  }, 90_000);
});
