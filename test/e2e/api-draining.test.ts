// Draining the real API process (`tsx api/main.ts`, docs/operations.md "Draining"): on SIGTERM
// /readyz answers 503 at once, the listener closes (after API_DRAIN_DELAY), a request in flight
// completes, and the process exits 0. The in-flight request is a registration whose body the
// client is still sending when the signal arrives, on a keep-alive connection as a load balancer's.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint, type Started } from '../support/processes.js';
import { silentAddress } from '../support/silent-address.js';
import { until } from '../support/until.js';

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness(); // its worker answers the registrations the API process sends to its task queue
  key = (await h.createKey(await h.createIssuer('Draining Issuer'))).key;
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

async function startApi(env: Record<string, string> = {}): Promise<{ api: Started; url: string }> {
  const port = await freePort();
  const api = await startEntryPoint(
    'api/main.ts',
    {
      DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
      TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
    'API listening',
  );
  return { api, url: `http://127.0.0.1:${port}` };
}

/**
 * A registration sent in two halves: the headers and half the body now, the rest when `finish` is
 * called. `response` settles when the API answers.
 */
function slowRegistration(url: string, agent: http.Agent) {
  const body = JSON.stringify(registrationFor(randomUUID()));
  const req = http.request(new URL('/v1/dispatches', url), {
    method: 'POST',
    agent,
    headers: { ...bearer(key), 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  });
  let answered = false;
  let socket: Socket | undefined;
  req.on('socket', (s) => (socket = s));
  const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        answered = true;
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    req.on('error', reject);
  });
  const half = Math.floor(body.length / 2);
  req.write(body.slice(0, half));
  return {
    response,
    answered: () => answered,
    finish: () => req.end(body.slice(half)),
    // The API process has read what was sent (its socket's receive queue is empty), so to it the
    // request is in flight. Before, a fixed 200 ms: on a loaded machine the API had not read the
    // bytes yet when SIGTERM came, and closing the listener closed the connection as idle (reset).
    read: () =>
      socket?.localPort !== undefined &&
      socket.bytesWritten > 0 &&
      socket.writableLength === 0 && // all handed to the kernel: on loopback, in the API's receive queue
      receiveQueueEmpty(Number(new URL(url).port), socket.localPort),
  };
}

/** Whether the server side of the loopback connection serverPort ← clientPort has no unread bytes (/proc/net/tcp). */
function receiveQueueEmpty(serverPort: number, clientPort: number): boolean {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const line = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((row) => row.trim().split(/\s+/))
    .find(([, local, remote]) => local?.endsWith(`:${hex(serverPort)}`) && remote?.endsWith(`:${hex(clientPort)}`));
  return line !== undefined && line[4].split(':')[1] === '00000000';
}

/** Whether a new connection to `url` is refused. */
const refused = (url: string) =>
  request(url, '/healthz').then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
  );

describe('SIGTERM to an API process', () => {
  it('answers /readyz 503 at once, finishes the request in flight, and exits 0', async () => {
    const { api, url } = await startApi({ API_DRAIN_DELAY: '3s' });
    const agent = new http.Agent({ keepAlive: true });
    try {
      expect((await request(url, '/readyz')).status).toBe(200);
      const slow = slowRegistration(url, agent);
      await until(slow.read, 'the API to have read the headers and half the body', 10_000);

      api.child.kill('SIGTERM');
      const readyz = await until(
        async () => {
          const res = await request(url, '/readyz');
          return res.status === 503 ? res : undefined;
        },
        '/readyz to answer 503',
        2_000,
      );
      expect(readyz.body).toMatchObject({ error: 'service_unavailable', message: 'not ready: shutting down' });
      expect(slow.answered()).toBe(false);

      slow.finish();
      expect((await slow.response).status).toBe(201);
      expect(await api.exited).toBe(0);
      expect(api.output()).toMatch(/shutting down: \/readyz answers 503[\s\S]*closing the listener/);
    } finally {
      agent.destroy();
      if (api.child.exitCode === null) api.child.kill('SIGKILL');
    }
  }, 60_000);

  it('stops accepting new connections at once by default, yet completes the request in flight, and exits 0', async () => {
    const { api, url } = await startApi();
    const agent = new http.Agent({ keepAlive: true });
    try {
      const slow = slowRegistration(url, agent);
      await until(slow.read, 'the API to have read the headers and half the body', 10_000);

      api.child.kill('SIGTERM');
      await until(() => refused(url), 'new connections to be refused', 5_000);
      expect(slow.answered()).toBe(false);

      slow.finish();
      expect((await slow.response).status).toBe(201);
      expect(await api.exited).toBe(0);
    } finally {
      agent.destroy();
      if (api.child.exitCode === null) api.child.kill('SIGKILL');
    }
  }, 60_000);

  it('drains and exits 0 when it comes right after "API listening", while the start-up still checks Temporal', async () => {
    // A Temporal that never answers: the start-up's check waits its 5 s. Before, the signal handlers
    // were installed only after that check, so a SIGTERM in those seconds (a pod stopped just after
    // it became ready) killed the process outright, dropping the requests in flight.
    const silent = await silentAddress('127.0.0.1');
    const { api, url } = await startApi({ TEMPORAL_ADDRESS: `127.0.0.1:${silent.port}` });
    try {
      expect((await request(url, '/healthz')).status).toBe(200);
      api.child.kill('SIGTERM');
      const code = await api.exited;
      expect({ code, output: code === 0 ? '' : api.output() }).toEqual({ code: 0, output: '' });
      expect(api.output()).toMatch(/shutting down: \/readyz answers 503[\s\S]*closing the listener/);
    } finally {
      if (api.child.exitCode === null) api.child.kill('SIGKILL');
      await silent.close();
    }
  }, 60_000);
});
