// Temporal over mTLS with an API key (docs/configuration.md "Temporal over TLS"): the API and the
// worker, as their own processes, reach a frontend that takes only a client certificate of its CA and
// `authorization: Bearer <key>` (test/support/temporal-tls-proxy.ts, in front of the tests' dev
// server), with the certificates, the CA, the server name and the key from the environment, under
// the names of Temporal's own environment configuration. A registration needs both (the API starts
// the workflow, the worker runs it). An API process without the key is refused by the frontend: its
// registrations answer 503, so the key really is what lets the others in.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { randomId, requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint, type Started } from '../support/processes.js';
import { startTemporalTlsProxy, TLS_SERVER_NAME, type TemporalTlsProxy } from '../support/temporal-tls-proxy.js';

let h: Harness;
let proxy: TemporalTlsProxy;
let key: string;
const taskQueue = randomId('tls');
const started: Started[] = [];

function tlsEnv(withKey = true): Record<string, string> {
  return {
    DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: proxy.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_TLS_CLIENT_CERT_PATH: proxy.files.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: proxy.files.clientKey,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: proxy.files.ca,
    TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME,
    ...(withKey ? { TEMPORAL_API_KEY: proxy.apiKey } : {}),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  };
}

async function startApi(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  started.push(await startEntryPoint('api/main.ts', { ...env, PORT: String(port) }, 'API listening'));
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  h = await startHarness({ worker: false });
  key = (await h.createKey(await h.createIssuer('TLS Issuer'))).key;
  proxy = await startTemporalTlsProxy(requireTestEnv('TEST_TEMPORAL_ADDRESS'));
  started.push(await startEntryPoint('worker/main.ts', { ...tlsEnv(), WORKER_METRICS_PORT: '0' }, 'worker started'));
}, 120_000);

afterAll(async () => {
  for (const process of started) if (process.child.exitCode === null) process.child.kill('SIGTERM');
  await Promise.all(started.map((process) => process.exited));
  await proxy?.close();
  await h?.stop();
}, 60_000);

describe('Temporal over mTLS with an API key', () => {
  it('registers a dispatch through an API and a worker that reach Temporal only that way', async () => {
    const url = await startApi(tlsEnv());
    const id = randomUUID();
    const created = await request(url, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id, status: 'dispatched' });
    expect((await request(url, '/readyz')).body).toMatchObject({ status: 'ready', checks: { temporal: true } });
    expect(proxy.calls.forwarded).toBeGreaterThan(0);
    expect(proxy.calls.unauthenticated).toBe(0);
  }, 90_000);

  it('is refused without the API key: the registration answers 503, the API logs why at start, and no log holds the key', async () => {
    const url = await startApi(tlsEnv(false));
    const created = await request(url, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(randomUUID()) });
    expect(created.status).toBe(503);
    expect(created.body).toMatchObject({ error: 'service_unavailable' });
    expect(proxy.calls.unauthenticated).toBeGreaterThan(0);
    for (const process of started) expect(process.output()).not.toContain(proxy.apiKey);
    expect(started[started.length - 1].output()).toMatch(
      /"reason":"16 UNAUTHENTICATED: API key missing or wrong".*Temporal is unreachable/,
    );
  }, 90_000);
});
