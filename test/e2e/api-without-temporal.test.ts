// An API process started while Temporal is down (a pod rescheduled or rolled out during the
// outage: docs/runbook.md "Temporal unreachable"): it starts, reads answer from Postgres, /readyz
// says `degraded`, what needs Temporal answers 503 service_unavailable; once Temporal answers, the
// same process registers without a restart; and SIGTERM still ends it with exit 0. Before, it
// waited 10 s for the connection and exited 1, so every API pod restarted in an outage took the
// reads down with it. An API whose TEMPORAL_NAMESPACE does not exist on its Temporal behaves the same.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint } from '../support/processes.js';
import { until } from '../support/until.js';

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness(); // its API registers the dispatch to read; its worker serves the task queue later
  key = (await h.createKey(await h.createIssuer('Outage Issuer'))).key;
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/**
 * A TCP relay on a port of its own to the tests' Temporal frontend, refusing connections until
 * `open()`: Temporal, as the API process sees it, is down and then comes back.
 */
async function switchableTemporal(): Promise<{ address: string; open(): void; close(): Promise<void> }> {
  const [host, port] = requireTestEnv('TEST_TEMPORAL_ADDRESS').split(':');
  let up = false;
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (!up) return client.destroy();
    const upstream = net.connect(Number(port), host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  const relayPort = await freePort();
  await new Promise<void>((resolve) => relay.listen(relayPort, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${relayPort}`,
    open: () => (up = true),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}

/** api/main.ts as a process of its own on the tests' Postgres and task queue, once it listens; `env` on top. */
async function startApiProcess(env: Record<string, string>) {
  const port = await freePort();
  const api = await startEntryPoint(
    'api/main.ts',
    {
      DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info', // 'API listening' is an info line
      ...env,
    },
    'API listening',
  );
  return { api, url: `http://127.0.0.1:${port}` };
}

describe('an API process started while Temporal is unreachable', () => {
  it('serves reads, answers 503 to registrations, registers once Temporal is back, and exits 0 on SIGTERM', async () => {
    const registered = randomUUID();
    const created = await request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(registered) });
    expect(created.status).toBe(201);

    const temporal = await switchableTemporal();
    const { api, url } = await startApiProcess({ TEMPORAL_ADDRESS: temporal.address });
    try {
      await until(() => api.output().includes('Temporal is unreachable'), 'the start-up warning that Temporal is unreachable', 10_000);

      const read = await request(url, `/v1/status/${registered}`, { headers: bearer(key) });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id: registered });

      const readyz = await request(url, '/readyz');
      expect(readyz.status).toBe(200);
      expect(readyz.body).toEqual({ status: 'degraded', checks: { database: true, temporal: false } });

      const refused = await request(url, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(randomUUID()) });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ error: 'service_unavailable' });

      temporal.open();
      const later = randomUUID();
      // 201, or 200 when an earlier try registered it but answered 503 after the 10 s deadline (a
      // first workflow task slower than that on a loaded machine): either way it is registered.
      let last = '';
      const accepted = await until(
        async () => {
          const res = await request(url, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(later) });
          last = `${res.status} ${JSON.stringify(res.body)}`;
          return res.status === 201 || res.status === 200 ? res : undefined;
        },
        'a registration through the same API process once Temporal answers',
        60_000,
      ).catch((error: Error) => {
        throw new Error(`${error.message}; its last answer: ${last}; the API's output:\n${api.output().slice(-3000)}`);
      });
      expect(accepted.body).toMatchObject({ id: later });
      expect((await request(url, `/v1/status/${later}`, { headers: bearer(key) })).status).toBe(200);
      expect((await request(url, '/readyz')).body).toMatchObject({ status: 'ready' });

      api.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
      expect(api.output()).not.toContain('Channel has been shut down');
    } finally {
      if (api.child.exitCode === null) api.child.kill('SIGKILL');
      await temporal.close();
    }
  }, 120_000);
});

// TEMPORAL_NAMESPACE that its Temporal does not have (a typo in the chart's values, a namespace not
// yet created) is the same case: before, every registration and carrier event answered 500 and
// /readyz said `ready`.
describe('an API process whose TEMPORAL_NAMESPACE Temporal does not have', () => {
  it('says so at start, serves reads, is degraded, answers 503 to what needs Temporal, and exits 0 on SIGTERM', async () => {
    const registered = randomUUID();
    expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(registered) })).status).toBe(201);

    const address = requireTestEnv('TEST_TEMPORAL_ADDRESS');
    const { api, url } = await startApiProcess({ TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'no-such-namespace' });
    try {
      const warning = `TEMPORAL_NAMESPACE no-such-namespace does not exist on Temporal at ${address}`;
      await until(() => api.output().includes(warning), 'the start-up line naming TEMPORAL_NAMESPACE', 10_000);

      expect((await request(url, `/v1/status/${registered}`, { headers: bearer(key) })).status).toBe(200);
      expect((await request(url, '/readyz')).body).toEqual({ status: 'degraded', checks: { database: true, temporal: false } });

      const refused = await request(url, '/v1/dispatches', { headers: bearer(key), body: registrationFor(randomUUID()) });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ error: 'service_unavailable' });
      const event = { status: 'in_transit', occurred_at: new Date().toISOString(), event_id: randomUUID() };
      const eventRefused = await request(url, `/v1/dispatches/${registered}/events`, { headers: bearer(key), body: event });
      expect(eventRefused.status).toBe(503);
      expect(eventRefused.body).toMatchObject({ error: 'service_unavailable' });

      api.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
    } finally {
      if (api.child.exitCode === null) api.child.kill('SIGKILL');
    }
  }, 120_000);
});
