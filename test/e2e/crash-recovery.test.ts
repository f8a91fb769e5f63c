// At-least-once through crashes (docs/webhooks.md "Crash guarantees": a crash of any process at any point loses no event): the
// worker is a real process and is killed with SIGKILL at the two points where an event is most
// exposed — during the HTTP attempt, and while the projection write (which stores the webhook event)
// is in flight. A fresh worker must finish the job: the event delivered, with the same id and body,
// and nothing created twice. Then the database goes away under a running worker (its role refused
// and its sessions ended, while the API and the other test files keep theirs): the same worker
// must finish the job once it is back.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { verify } from '../../consumer-kit/src/index.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { randomId, requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { whenReady } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { statusUpdatedDeliveries, untilDelivered } from '../support/deliveries.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = path.join(ROOT, 'test', 'support', 'worker-process.ts');

let h: Harness;
let receiver: Receiver;
let key: string;
let secret: string;
let issuerId: string;
const workers: ChildProcess[] = [];

/** Starts the product's worker in its own process, on the harness's task queue. */
async function startWorker(name: string, databaseUrl = h.config.DATABASE_URL!): Promise<ChildProcess> {
  // tsx as a loader in the one process (its CLI would fork a child that a SIGKILL does not reach).
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? ROOT,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      TEST_WORKFLOW_BUNDLE: requireTestEnv('TEST_WORKFLOW_BUNDLE'),
      TEST_WORKER_NAME: name,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  await whenReady(child, 'worker ready', 'the worker');
  return child;
}

async function kill(worker: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGKILL');
  await exited;
}

async function register(): Promise<string> {
  const id = randomUUID();
  const registered = await request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) });
  expect(registered.status).toBe(201);
  return id;
}

async function postEvent(id: string, status: string) {
  const sent = await request(h.baseUrl, `/v1/dispatches/${id}/events`, {
    method: 'POST',
    headers: bearer(key),
    body: { status, occurred_at: new Date().toISOString() },
  });
  expect(sent.status).toBe(202);
}

const requestsFor = (id: string) => receiver.requests.filter((r) => JSON.parse(r.body.toString('utf8')).data.id === id);

/** Posts an in_transit event and holds its first webhook attempt open; returns once it has arrived, with the means to answer it 200. */
async function postAndHoldFirstAttempt(id: string): Promise<() => void> {
  let release!: () => void;
  const held = new Promise<number>((resolve) => (release = () => resolve(200)));
  receiver.respond = (n) => (requestsFor(id).length === 1 && n === receiver.requests.length ? held : 200);
  await postEvent(id, 'in_transit');
  await until(() => requestsFor(id).length === 1, 'the first attempt to arrive');
  return release;
}

const deliveryOf = (id: string) => statusUpdatedDeliveries(h.pool, issuerId, id);

beforeAll(async () => {
  h = await startHarness({ worker: false, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  issuerId = await h.createIssuer('Crash Test Issuer');
  key = (await h.createKey(issuerId)).key;
  const created = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated'] });
  if (!created.ok) throw new Error(created.reason);
  secret = created.secret;
}, 60_000);

afterEach(async () => {
  for (const worker of workers.splice(0)) if (worker.exitCode === null && worker.signalCode === null) await kill(worker);
});

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('a worker killed with SIGKILL loses no webhook event', () => {
  it('during the HTTP attempt: the next worker sends the same event again, with the same id, body and attempt number', async () => {
    const first = await startWorker(randomId('worker-a'));
    const id = await register();
    // The first request is held open: the worker is killed while it waits for the answer.
    const releaseHeld = await postAndHoldFirstAttempt(id);

    await kill(first);
    releaseHeld();
    await startWorker(randomId('worker-b'));
    const [before, after] = await until(() => (requestsFor(id).length >= 2 ? requestsFor(id) : undefined), 'the attempt again');

    expect(after.headers['x-service-event-id']).toBe(before.headers['x-service-event-id']);
    expect(after.body.equals(before.body)).toBe(true);
    // Attempt 1 never got an answer it could record, so it is attempt 1 again.
    expect([before.headers['x-service-delivery-attempt'], after.headers['x-service-delivery-attempt']]).toEqual(['1', '1']);
    expect(verify(after.body, after.headers['x-service-signature'] as string, secret)).toBe(true);
    const delivery = await untilDelivered(h.pool, issuerId, id);
    expect(delivery).toEqual([{ state: 'delivered', attempts: 1 }]);
  }, 90_000);

  it('while the projection (and the webhook event with it) is being written: the next worker writes it once and delivers it', async () => {
    const name = randomId('worker-c');
    const first = await startWorker(name);
    const id = await register();
    receiver.respond = () => 200;
    // Hold the dispatch's row so the worker's projection write blocks mid-flight.
    const lock = await h.pool.connect();
    await lock.query('BEGIN');
    await lock.query('SELECT 1 FROM dispatches WHERE id = $1 FOR UPDATE', [id]);
    try {
      await postEvent(id, 'in_transit');
      await until(async () => {
        const { rows } = await h.pool.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [
          name,
        ]);
        return rows.length > 0;
      }, 'the projection write to block on the row lock');
      await kill(first);
    } finally {
      await lock.query('ROLLBACK');
      lock.release();
    }
    await startWorker(randomId('worker-d'));

    const [arrived] = await until(() => (requestsFor(id).length >= 1 ? requestsFor(id) : undefined), 'the webhook');
    const envelope = JSON.parse(arrived.body.toString('utf8'));
    expect(envelope).toMatchObject({ event: 'status.updated', data: { id, status: 'in_transit' } });
    const status = await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) });
    expect(status.body.status).toBe('in_transit');
    const { rows } = await h.pool.query(`SELECT type FROM webhook_events WHERE dispatch_id = $1 AND type = 'status.updated'`, [id]);
    expect(rows).toHaveLength(1);
    const { rows: recorded } = await h.pool.query(`SELECT effect FROM carrier_events WHERE dispatch_id = $1`, [id]);
    expect(recorded).toEqual([{ effect: 'applied' }]);
  }, 90_000);
});

describe('the database unreachable from the worker loses no webhook event', () => {
  // The worker logs in as a role of its own; an outage ends that role's sessions and refuses it new
  // ones, so every query of the worker fails until the role may log in again.
  const role = `outage_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  let workerUrl: string;
  beforeAll(async () => {
    await h.pool.query(`CREATE ROLE ${role} LOGIN PASSWORD '${role}'`);
    await h.pool.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
    await h.pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
    await h.pool.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    const url = new URL(h.config.DATABASE_URL!);
    url.username = role;
    url.password = role;
    workerUrl = url.toString();
  });
  afterAll(async () => {
    await h.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
    await h.pool.query(`DROP OWNED BY ${role}`);
    await h.pool.query(`DROP ROLE ${role}`);
  });

  async function outage(): Promise<void> {
    await h.pool.query(`ALTER ROLE ${role} NOLOGIN`);
    await h.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
    // pg_terminate_backend only signals: wait until the sessions are really gone.
    await until(async () => {
      const { rows } = await h.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1`, [role]);
      return rows[0].n === 0;
    }, 'the worker role to have no session left');
  }
  const recover = () => h.pool.query(`ALTER ROLE ${role} LOGIN`);

  it('before the carrier event: once the database is back, the event is projected once and delivered as attempt 1', async () => {
    await startWorker(randomId('worker-e'), workerUrl);
    const id = await register();
    receiver.respond = () => 200;
    await outage();
    try {
      await postEvent(id, 'in_transit');
      // Well past the projection write's first retries: still nothing, and nothing lost.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(requestsFor(id)).toHaveLength(0);
    } finally {
      await recover();
    }
    const [arrived] = await until(() => (requestsFor(id).length >= 1 ? requestsFor(id) : undefined), 'the webhook');
    expect(JSON.parse(arrived.body.toString('utf8'))).toMatchObject({ event: 'status.updated', data: { id, status: 'in_transit' } });
    expect(arrived.headers['x-service-delivery-attempt']).toBe('1');
    expect(await untilDelivered(h.pool, issuerId, id)).toEqual([{ state: 'delivered', attempts: 1 }]);
    const status = await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) });
    expect(status.body.status).toBe('in_transit');
  }, 90_000);

  it('during the HTTP attempt, so that it cannot be recorded: once back, the same event is sent again as attempt 1', async () => {
    await startWorker(randomId('worker-f'), workerUrl);
    const id = await register();
    const releaseHeld = await postAndHoldFirstAttempt(id);
    await outage();
    try {
      // Answered, but the worker cannot record the attempt: the run fails and Temporal retries it.
      releaseHeld();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(await deliveryOf(id)).toEqual([{ state: 'pending', attempts: 0 }]);
    } finally {
      await recover();
    }
    const [before, after] = await until(() => (requestsFor(id).length >= 2 ? requestsFor(id) : undefined), 'the attempt again');
    expect(after.headers['x-service-event-id']).toBe(before.headers['x-service-event-id']);
    expect(after.body.equals(before.body)).toBe(true);
    expect([before.headers['x-service-delivery-attempt'], after.headers['x-service-delivery-attempt']]).toEqual(['1', '1']);
    expect(verify(after.body, after.headers['x-service-signature'] as string, secret)).toBe(true);
    expect(await untilDelivered(h.pool, issuerId, id)).toEqual([{ state: 'delivered', attempts: 1 }]);
  }, 90_000);
});
