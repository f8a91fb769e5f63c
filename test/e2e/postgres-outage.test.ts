// A Postgres outage and its recovery while the API and the worker run (docs/runbook.md "Postgres
// unreachable"): what an operator sees in a failover or a Postgres restart. The database is an
// embedded Postgres of this file's own, stopped (fast shutdown, as a restart does) and started again
// on the same port and data folder; the API (api/main.ts) and the worker (test/support/worker-process.ts)
// are processes of their own, on the tests' Temporal dev server, and are not restarted. During the
// outage: reads, registrations and events answer 503 in the error shape with Retry-After, at once;
// /readyz says not ready and why; each process says once that the database is unreachable, with no
// stack per request and no personal data; the worker's activities fail and are retried by Temporal.
// Once Postgres is back: everything answers within seconds, an event accepted just before the outage
// and a webhook retry that fell due during it arrive exactly once, and an event refused during the
// outage and sent again is applied once.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import { migrate } from '../../db/migrate.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { SCOPES } from '../../domain/api-keys.js';
import { freePort, startPostgres, type RunningPostgres } from '../../devtools/postgres.js';
import { bearer, request, type TestResponse } from '../api/http.js';
import { statusUpdatedDeliveries } from '../support/deliveries.js';
import { randomId, requireTestEnv } from '../support/env.js';
import { restartablePort, startEntryPoint, type Started } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';

// Personal data a log line must never carry (docs/privacy.md): a registration's postal code and reference.
const POSTAL_CODE = '75011';
const REFERENCE = 'outage-cardholder-reference';

const dir = mkdtempSync(path.join(tmpdir(), 'pg-outage-'));
chmodSync(dir, 0o755); // the embedded Postgres runs as its own user when we are root
const dataDir = path.join(dir, 'postgres');
let pgPort: number;
let postgres: RunningPostgres;
let pool: Pool;
let receiver: Receiver;
let issuerId: string;
let key: string;
let api: Started;
let apiUrl: string;
let worker: Started;
/** Dispatches whose first status.updated attempt the receiver refuses (500). */
const refuseFirst = new Set<string>();

const startDatabase = () => startPostgres({ dataDir, port: pgPort, persistent: true });

beforeAll(async () => {
  pgPort = await restartablePort(); // Postgres comes back on it
  postgres = await startDatabase();
  await migrate(postgres.url);
  // The test's own pool: it reads the deliveries once the database is back.
  pool = createPool(postgres.url, { max: 2, applicationName: 'test-pg-outage', onIdleError: () => {} });
  issuerId = (await createIssuer(pool, 'Outage Issuer')).id;
  key = (await createApiKey(pool, { issuerId, scopes: [...SCOPES], mode: 'live' }))!.key;
  receiver = await startReceiver();
  receiver.respond = (n) => {
    const id = dispatchOf(receiver.requests[n - 1]);
    if (!refuseFirst.has(id)) return 200;
    refuseFirst.delete(id);
    return 500;
  };
  const created = await createWebhookEndpoint(pool, { issuerId, url: receiver.url, events: ['status.updated'] });
  if (!created.ok) throw new Error(created.reason);

  const taskQueue = randomId('pg-outage');
  const common = { DATABASE_URL: postgres.url, TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'), TEMPORAL_TASK_QUEUE: taskQueue };
  const apiPort = await freePort();
  [api, worker] = await Promise.all([
    startEntryPoint('api/main.ts', { ...common, PORT: String(apiPort), HOST: '127.0.0.1', LOG_LEVEL: 'info' }, 'API listening'),
    startEntryPoint(
      'test/support/worker-process.ts',
      {
        ...common,
        TEST_WORKFLOW_BUNDLE: requireTestEnv('TEST_WORKFLOW_BUNDLE'),
        TEST_WORKER_NAME: randomId('pg-outage-worker'),
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        // A first retry 3 s after a failed attempt: it falls due during the outage.
        WEBHOOK_RETRY_SCHEDULE: '3s,5m,30m,2h,8h',
        LOG_LEVEL: 'info',
      },
      'worker ready',
    ),
  ]);
  apiUrl = `http://127.0.0.1:${apiPort}`;
}, 60_000);

afterAll(async () => {
  for (const started of [api, worker]) {
    if (!started || started.child.exitCode !== null) continue;
    started.child.kill('SIGKILL');
    await started.exited;
  }
  await receiver?.close();
  await pool?.end().catch(() => {});
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (postgres?.dataDir) rmSync(postgres.dataDir, { recursive: true, force: true }); // relocated when root could not share dir
}, 60_000);

function dispatchOf(received: { body: Buffer }): string {
  return JSON.parse(received.body.toString('utf8')).data?.id;
}

const webhooksFor = (id: string) => receiver.requests.filter((r) => dispatchOf(r) === id);

const registrationBody = (id: string) => ({ id, destination: { postal_code: POSTAL_CODE, country_code: 'FR' }, reference: REFERENCE });

const register = (id: string) => request(apiUrl, '/v1/dispatches', { headers: bearer(key), body: registrationBody(id) });

const postEvent = (id: string, eventId: string) =>
  request(apiUrl, `/v1/dispatches/${id}/events`, {
    headers: bearer(key),
    body: { status: 'in_transit', occurred_at: new Date(Date.now() - 60_000).toISOString(), event_id: eventId },
  });

/** A request with the time it took. */
async function timed(send: () => Promise<TestResponse>): Promise<TestResponse & { ms: number }> {
  const started = Date.now();
  const res = await send();
  return { ...res, ms: Date.now() - started };
}

/** The answer an issuer must get while the database is away: 503 in the error shape, Retry-After, at once. */
function expectUnavailable(res: TestResponse & { ms: number }): void {
  expect({ status: res.status, error: res.body?.error }).toEqual({ status: 503, error: 'service_unavailable' });
  expect(res.body.message).toMatch(/database/);
  expect(res.body.request_id).toEqual(expect.any(String));
  expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
  expect(res.ms).toBeLessThan(5_000);
}

/** Lines (parsed JSON) a process logged, from `from` characters on. */
const linesOf = (started: Started, from = 0) =>
  started
    .output()
    .slice(from)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });

describe('Postgres stopped and started again while the API and the worker run', () => {
  it('answers 503 with Retry-After and says why during the outage; after it, answers again and delivers every event once', async () => {
    const [retried, accepted, refused] = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of [retried, accepted, refused]) expect((await register(id)).status).toBe(201);
    await until(async () => (await request(apiUrl, `/v1/status/${retried}`, { headers: bearer(key) })).status === 200, 'the projection');

    // A webhook whose first attempt fails: its retry falls due 3 s later, in the outage.
    refuseFirst.add(retried);
    expect((await postEvent(retried, 'retried-1')).status).toBe(202);
    await until(
      async () => ((await statusUpdatedDeliveries(pool, issuerId, retried))[0]?.attempts === 1 ? true : undefined),
      'the first attempt to be recorded',
    );
    // An event accepted just before the outage.
    expect((await postEvent(accepted, 'accepted-1')).status).toBe(202);
    const apiLogFrom = api.output().length;
    const workerLogFrom = worker.output().length;
    await postgres.stop();
    const outageStarted = Date.now();

    // During the outage: the issuer's calls answer 503 with Retry-After, at once.
    expectUnavailable(await timed(() => request(apiUrl, `/v1/status/${retried}`, { headers: bearer(key) })));
    expectUnavailable(await timed(() => register(randomUUID())));
    expectUnavailable(await timed(() => postEvent(refused, 'refused-1')));
    expectUnavailable(await timed(() => request(apiUrl, '/v1/dispatches?limit=5', { headers: bearer(key) })));
    // The operator's readiness probe says not ready, and why.
    const ready = await timed(() => request(apiUrl, '/readyz'));
    expect(ready.status).toBe(503);
    expect(ready.body.message).toMatch(/cannot reach the database/);
    expect(ready.ms).toBeLessThan(5_000);
    // Well past the retry's due time: the worker's activities fail and Temporal retries them.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, outageStarted + 8_000 - Date.now())));
    for (let i = 0; i < 5; i++) expect((await request(apiUrl, `/v1/status/${retried}`, { headers: bearer(key) })).status).toBe(503);

    postgres = await startDatabase();
    const restarted = Date.now();

    // After: readiness and the issuer's calls answer again within seconds, with no process restarted.
    await until(async () => (await request(apiUrl, '/readyz')).status === 200, 'readiness', 15_000);
    expect((await request(apiUrl, `/v1/status/${retried}`, { headers: bearer(key) })).status).toBe(200);
    expect(Date.now() - restarted).toBeLessThan(10_000);
    // The event refused during the outage, sent again: applied once.
    const again = await postEvent(refused, 'refused-1');
    expect(again.status).toBe(202);
    expect(again.body.duplicate).toBe(false);

    // Every webhook arrives once: the retry that fell due in the outage (after its refused first
    // attempt), the event accepted before it, the event sent again after it.
    await until(() => [retried, accepted, refused].every((id) => webhooksFor(id).some((r) => r.receivedAt >= restarted)) || undefined, 'the webhooks', 45_000); // prettier-ignore
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // nothing more comes
    expect(webhooksFor(retried).map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1', '2']);
    // The event accepted just before the outage is one webhook event, delivered once. Its worker may
    // have sent it as the database went down, before it could record the answer: then the same event
    // is sent again as the same attempt (docs/webhooks.md "Crash guarantees": consumers dedupe by id).
    const acceptedIds = new Set(webhooksFor(accepted).map((r) => r.headers['x-service-event-id']));
    expect(acceptedIds.size).toBe(1);
    expect(new Set(webhooksFor(accepted).map((r) => r.headers['x-service-delivery-attempt']))).toEqual(new Set(['1']));
    expect(webhooksFor(refused)).toHaveLength(1);
    for (const id of [retried, accepted, refused]) {
      expect(JSON.parse(webhooksFor(id).at(-1)!.body.toString('utf8'))).toMatchObject({ event: 'status.updated', data: { id, status: 'in_transit' } }); // prettier-ignore
    }
    // Nothing marked undeliverable or lost because of the outage.
    expect(await statusUpdatedDeliveries(pool, issuerId, retried)).toEqual([{ state: 'delivered', attempts: 2 }]);
    expect(await statusUpdatedDeliveries(pool, issuerId, accepted)).toEqual([{ state: 'delivered', attempts: 1 }]);
    expect(await statusUpdatedDeliveries(pool, issuerId, refused)).toEqual([{ state: 'delivered', attempts: 1 }]);
    const { rows } = await pool.query('SELECT dispatch_id::text AS id, count(*)::int AS n FROM carrier_events WHERE dispatch_id = ANY($1::uuid[]) GROUP BY 1', [[retried, accepted, refused]]); // prettier-ignore
    expect(Object.fromEntries(rows.map((row) => [row.id, row.n]))).toEqual({ [retried]: 1, [accepted]: 1, [refused]: 1 });
    for (const id of [retried, accepted, refused]) {
      expect((await request(apiUrl, `/v1/status/${id}`, { headers: bearer(key) })).body.status).toBe('in_transit');
    }
    const readyAgain = await request(apiUrl, '/readyz');
    expect(readyAgain.status).toBe(200);

    // The logs: each process says once that the database is unreachable, and once that it is back;
    // no stack per request or per attempt, no personal data.
    for (const [name, started, from] of [
      ['api', api, apiLogFrom],
      ['worker', worker, workerLogFrom],
    ] as const) {
      const lines = linesOf(started, from);
      const unreachable = lines.filter((line) => /database unreachable/.test(line.msg));
      expect({ name, unreachable: unreachable.length }).toEqual({ name, unreachable: 1 });
      expect({ name, back: lines.filter((line) => /database reachable again/.test(line.msg)).length }).toEqual({ name, back: 1 });
      expect({ name, stacks: lines.filter((line) => JSON.stringify(line).includes('"stack"')).map((line) => line.msg) }).toEqual({ name, stacks: [] }); // prettier-ignore
      expect(started.output()).not.toContain(POSTAL_CODE);
      expect(started.output()).not.toContain(REFERENCE);
    }
  }, 120_000);
});
