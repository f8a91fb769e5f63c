// The production shape, run for real (docs/operations.md "The production engine"): the
// real Temporal server (go.temporal.io/server 1.32, devtools/temporal-server.ts), two server
// processes forming one cluster on one Postgres; the service's migrations as their own step
// (`npm run migrate`, as docker-compose's `migrate` service and the chart's Job run them); two API
// and two worker processes from the production entry points (api/main.ts, worker/main.ts), each
// with only TEMPORAL_ADDRESS and DATABASE_URL to find the others. API 1 and worker 1 talk to server
// member A, API 2 and worker 2 to member B. A real local receiver checks every webhook's signature.
//
// A Postgres of its own (a throwaway embedded one): Temporal's connections and the four processes'
// pools stay away from the shared test database's connection limit.
//
// On a machine whose tool cache lacks the server this file builds it first (about 5 minutes on 2
// cores, at the lowest CPU priority); test/platform/temporal-server.test.ts shares that one build.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { verify } from '../../consumer-kit/src/index.js';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { SCOPES } from '../../domain/api-keys.js';
import { freePort, startPostgres, type RunningPostgres } from '../../devtools/postgres.js';
import { startTemporalCluster, type TemporalCluster } from '../../devtools/temporal-server.js';
import { querySnapshot } from '../../temporal/client.js';
import { bearer, registrationFor, request, type TestResponse } from '../api/http.js';
import { run } from '../support/kube-tools.js';
import { whenReady, type Started } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NAMESPACE = 'card-delivery';
/** Dispatches registered before the worker is killed; more are registered around the server kill. */
const FIRST_BATCH = 150;
const AROUND_SERVER_KILL = 25;
const WEBHOOKS_WITHIN_MS = 4 * 60_000;

let work: string;
let postgres: RunningPostgres;
let cluster: TemporalCluster;
let databaseUrl: string;
let migration: { code: number; output: string };
let pool: pg.Pool;
let receiver: Receiver;
let key: string;
let secret: string;
const processes: Started[] = [];
const api: { one?: string; two?: string } = {};
const workers: { one?: Started; two?: Started } = {};
const firstBatch: string[] = [];
/** The calls that were tried again, printed at the end: how the integrator's side rode out the kills. */
const retries: string[] = [];

/** A production entry point in a process of its own (tsx as a loader in that one process, so a SIGKILL reaches it). */
async function startService(entry: 'api/main.ts' | 'worker/main.ts', temporalAddress: string, extra: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? ROOT,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TASK_QUEUE: 'card-delivery',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', // the receiver is on 127.0.0.1
      WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s,10s,30s',
      RATE_LIMIT_PER_MINUTE: '100000',
      // Two members' Temporal roles and four processes share one Postgres's 100 connections.
      DATABASE_POOL_MAX: '5',
      WORKER_DATABASE_POOL_MAX: '8',
      WORKER_METRICS_PORT: '0',
      WORKER_SHUTDOWN_GRACE: '2s',
      CDS_RUNTIME_FILE: '/nonexistent/runtime.json',
      LOG_LEVEL: 'info',
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started = await whenReady(child, entry === 'api/main.ts' ? 'API listening' : 'worker started', entry);
  processes.push(started);
  return started;
}

async function startApi(temporalAddress: string): Promise<string> {
  const port = await freePort();
  await startService('api/main.ts', temporalAddress, { PORT: String(port), HOST: '127.0.0.1' });
  return `http://127.0.0.1:${port}`;
}

async function sigkill(started: Started): Promise<void> {
  started.child.kill('SIGKILL');
  await started.exited;
}

/** Runs `task` over `items`, `concurrency` at a time. */
async function inParallel<T>(items: T[], concurrency: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        await task(items[index], index);
      }
    }),
  );
}

/**
 * An integrator's call: a 503 (Temporal unreachable for a moment, as while shards move off a dead
 * server) or a refused connection is tried again, as docs/http-contract.md tells integrators to.
 * Registration and carrier events are idempotent, so a retry changes nothing that already happened.
 */
async function call(baseUrl: string, pathName: string, options: Parameters<typeof request>[2]): Promise<TestResponse> {
  const deadline = Date.now() + 3 * 60_000;
  for (;;) {
    try {
      const response = await request(baseUrl, pathName, options);
      if (response.status !== 503 || Date.now() > deadline) return response;
      retries.push(`${pathName}: 503`);
    } catch (error) {
      retries.push(`${pathName}: ${String(error)}`);
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function register(baseUrl: string, id: string): Promise<TestResponse> {
  const registered = await call(baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) });
  expect([200, 201]).toContain(registered.status);
  return registered;
}

async function postEvent(baseUrl: string, id: string, status: string): Promise<void> {
  const sent = await call(baseUrl, `/v1/dispatches/${id}/events`, {
    method: 'POST',
    headers: bearer(key),
    body: { status, occurred_at: new Date().toISOString() },
  });
  expect(sent.status).toBe(202);
}

/** `<dispatch id> <status>` of every status.updated webhook received so far, each signature checked. */
function receivedStatuses(): Set<string> {
  const seen = new Set<string>();
  for (const received of receiver.requests) {
    expect(verify(received.body, received.headers['x-service-signature'] as string, secret)).toBe(true);
    const envelope = JSON.parse(received.body.toString('utf8'));
    if (envelope.event === 'status.updated') seen.add(`${envelope.data.id} ${envelope.data.status}`);
  }
  return seen;
}

/** Waits until a signed status.updated webhook saying `status` has arrived for every id; returns the ones still missing on timeout. */
async function untilWebhooks(ids: string[], status: string): Promise<string[]> {
  const missing = () => {
    const seen = receivedStatuses();
    return ids.filter((id) => !seen.has(`${id} ${status}`));
  };
  try {
    await until(() => missing().length === 0, `a ${status} webhook for each of ${ids.length} dispatches`, WEBHOOKS_WITHIN_MS);
  } catch {
    // the assertion below names what never came
  }
  return missing();
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'cds-production-'));
  chmodSync(work, 0o755); // the embedded Postgres runs as its own user when we are root
  postgres = await startPostgres({ dataDir: path.join(work, 'postgres'), persistent: false });
  databaseUrl = postgres.url;
  const url = new URL(postgres.url);
  const endpoint = { host: url.hostname, port: Number(url.port), user: url.username, password: decodeURIComponent(url.password) };
  // Builds the server first when the tool cache lacks it.
  cluster = await startTemporalCluster({
    postgres: endpoint,
    members: 2,
    dataDir: path.join(work, 'temporal'),
    namespace: NAMESPACE,
    maxConns: 4,
  });

  // The migrations: their own one-shot step, before any api or worker process starts.
  const migrate = await run('npm', ['run', '-s', 'migrate'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? ROOT, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' },
    timeoutMs: 5 * 60_000,
  });
  migration = { code: migrate.code, output: migrate.stdout + migrate.stderr };
  if (migration.code !== 0) throw new Error(`npm run migrate failed:\n${migration.output}`);

  pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  receiver = await startReceiver();
  const issuer = await createIssuer(pool, 'Production Topology Issuer');
  key = (await createApiKey(pool, { issuerId: issuer.id, scopes: [...SCOPES], mode: 'live' }))!.key;
  const created = await createWebhookEndpoint(pool, { issuerId: issuer.id, url: receiver.url, events: ['status.updated'] });
  if (!created.ok) throw new Error(created.reason);
  secret = created.secret;

  const [a, b] = cluster.members;
  // Worker 1 alone at first: every workflow of the first batch starts on it and stays in its cache.
  workers.one = await startService('worker/main.ts', a.address);
  [api.one, api.two] = await Promise.all([startApi(a.address), startApi(b.address)]);
}, 30 * 60_000);

afterAll(async () => {
  if (retries.length > 0) console.info(`${retries.length} calls were tried again:\n${retries.slice(0, 20).join('\n')}`);
  await Promise.all(
    processes.map(async (started) => {
      const timer = setTimeout(() => started.child.kill('SIGKILL'), 10_000);
      started.child.kill('SIGTERM');
      await started.exited;
      clearTimeout(timer);
    }),
  );
  await receiver?.close();
  await pool?.end();
  await cluster?.stop();
  await postgres?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 2 * 60_000);

describe('the production topology: two Temporal servers on one Postgres, two API and two worker processes', () => {
  it('runs the migrations as their own step, and the two server processes form one cluster', async () => {
    expect(migration.output).toMatch(/migrations applied/);
    const temporalDb = new pg.Client({ connectionString: databaseUrl.replace(/\/card_delivery$/, '/temporal') });
    await temporalDb.connect();
    try {
      // Each of the four roles (frontend, history, matching, worker) has one member per process.
      const { rows } = await temporalDb.query(
        'SELECT role, count(DISTINCT rpc_port)::int AS members FROM cluster_membership WHERE record_expiry > now() GROUP BY role ORDER BY role',
      );
      expect(rows).toEqual([1, 2, 3, 4].map((role) => ({ role, members: 2 })));
    } finally {
      await temporalDb.end();
    }
  });

  it(
    'answers a dispatch registered on API 1 with the same status record on API 2',
    async () => {
      for (let i = 0; i < FIRST_BATCH; i += 1) firstBatch.push(randomUUID());
      const registered = new Map<string, unknown>();
      await inParallel(firstBatch, 8, async (id) => {
        registered.set(id, (await register(api.one!, id)).body);
      });
      await inParallel(firstBatch, 8, async (id) => {
        const status = await request(api.two!, `/v1/status/${id}`, { headers: bearer(key) });
        expect(status.status).toBe(200);
        expect(status.body).toEqual(registered.get(id));
      });
    },
    5 * 60_000,
  );

  it(
    'delivers every carrier event, sent through either API, as a signed webhook, though the worker that held the workflows is SIGKILLed mid-traffic',
    async () => {
      expect(firstBatch).toHaveLength(FIRST_BATCH);
      workers.two = await startService('worker/main.ts', cluster.members[1].address);
      let killed: Promise<void> | undefined;
      await inParallel(firstBatch, 8, async (id, index) => {
        await postEvent(index % 2 === 0 ? api.one! : api.two!, id, 'in_transit');
        if (index === Math.floor(FIRST_BATCH / 3)) killed = sigkill(workers.one!);
      });
      await killed;
      expect(workers.one!.child.signalCode).toBe('SIGKILL');
      expect(await untilWebhooks(firstBatch, 'in_transit')).toEqual([]);
      for (const id of firstBatch.slice(0, 3)) {
        const status = await request(api.one!, `/v1/status/${id}`, { headers: bearer(key) });
        expect(status.body.status).toBe('in_transit');
      }
    },
    8 * 60_000,
  );

  it(
    'loses no dispatch when a Temporal server process is SIGKILLed mid-traffic: every dispatch registered before and after is there and every event is delivered',
    async () => {
      expect(firstBatch).toHaveLength(FIRST_BATCH);
      const [a, b] = cluster.members;
      // Worker 1 restarted on member A, as its orchestrator would; API 1 and worker 1 stay on A.
      workers.one = await startService('worker/main.ts', a.address);
      const before = Array.from({ length: AROUND_SERVER_KILL }, () => randomUUID());
      await inParallel(before, 8, async (id, index) => {
        await register(index % 2 === 0 ? api.one! : api.two!, id);
      });

      const registeredBefore = [...firstBatch, ...before];
      let killed: Promise<void> | undefined;
      await inParallel(registeredBefore, 8, async (id, index) => {
        await postEvent(api.one!, id, 'out_for_delivery');
        if (index === Math.floor(registeredBefore.length / 3)) killed = b.kill('SIGKILL');
      });
      await killed;
      expect((await b.exited).signal).toBe('SIGKILL');

      const after = Array.from({ length: AROUND_SERVER_KILL }, () => randomUUID());
      await inParallel(after, 8, async (id) => {
        await register(api.one!, id);
        await postEvent(api.one!, id, 'out_for_delivery');
      });

      const all = [...registeredBefore, ...after];
      expect(await untilWebhooks(all, 'out_for_delivery')).toEqual([]);
      // Each read on both APIs (status reads come from Postgres: API 2 answers though its server is gone).
      await inParallel(all, 8, async (id, index) => {
        const status = await request(index % 2 === 0 ? api.one! : api.two!, `/v1/status/${id}`, { headers: bearer(key) });
        expect([status.status, status.body.status]).toEqual([200, 'out_for_delivery']);
      });
      // And each workflow answers, through the surviving member, with the state its events gave it.
      const connection = await Connection.connect({ address: a.address });
      try {
        const client = new Client({ connection, namespace: NAMESPACE });
        const states: Record<string, string[]> = {};
        await inParallel(all, 8, async (id) => {
          const state = (await querySnapshot(client, id))?.state.status ?? 'missing';
          (states[state] ??= []).push(id);
        });
        expect(Object.keys(states)).toEqual(['out_for_delivery']);
        expect(states.out_for_delivery).toHaveLength(all.length);
      } finally {
        await connection.close();
      }
    },
    10 * 60_000,
  );
});
