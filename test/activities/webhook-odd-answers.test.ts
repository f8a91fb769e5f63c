// A consumer's endpoint that answers in odd ways (docs/webhooks.md "Delivery and retry schedule"),
// through the delivery activity, against REAL local receivers (raw TCP, so the answer can be
// anything: HTTP/1.0, a connection cut mid-answer, bytes that are not HTTP, an endless body) and the
// real test Postgres. Each attempt is recorded with what happened in words the endpoint's owner can
// act on (the delivery log shows `error` when there is no status), fails or succeeds as DESIGN §3
// says (non-2xx or no complete answer within the limit fails), and is followed by the schedule's
// delay. Statuses that some senders treat specially (410, 429 with Retry-After) are failures on the
// schedule like any other non-2xx: DESIGN's schedule is fixed.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { ApplicationFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery.js';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { loadConfig } from '../../platform/config.js';
import { selfSignedCertificate } from '../support/certificate.js';
import { requireTestEnv } from '../support/env.js';
import { until } from '../support/until.js';
import { createWebhookEvents } from '../support/webhook-events.js';

/** A receiver that reads the request's first bytes and then does `answer` with the raw socket. */
interface RawReceiver {
  base: string;
  /** Connections the sender closed or that ended (the receiver never closes one unless told to). */
  closed: number;
  close(): Promise<void>;
}

const servers: Array<{ close(): Promise<void> }> = [];

async function rawReceiver(answer: (socket: net.Socket) => void): Promise<RawReceiver> {
  const sockets = new Set<net.Socket>();
  const receiver = { base: '', closed: 0, close: async () => {} };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => (receiver.closed += 1));
    let request = '';
    const onData = (chunk: Buffer) => {
      request += chunk.toString('latin1');
      // Answer once the request's body (a small JSON envelope) has arrived in full.
      const end = request.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(request)?.[1] ?? 0);
      if (end >= 0 && request.length >= end + 4 + length) {
        socket.off('data', onData);
        answer(socket);
      }
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  servers.push(receiver);
  return receiver;
}

const configFor = () =>
  loadConfig({ WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '1m,5m,30m,2h,8h' });
const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

let pool: Pool;
let issuerId: string;

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 4, applicationName: 'test-webhook-odd-answers' });
});
beforeEach(async () => {
  issuerId = (await createIssuer(pool, 'Odd Answers Issuer')).id;
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(async () => {
  await pool?.end();
});

/** Attempt 1 of a new event to `url`: what the activity answered and the attempt it recorded. */
async function firstAttempt(url: string) {
  const created = await createWebhookEndpoint(pool, { issuerId, url, events: ['status.updated'] });
  if (!created.ok) throw new Error(created.reason);
  const id = randomUUID();
  const [pair] = await createWebhookEvents(pool, {
    dispatchId: id,
    issuerId,
    mode: 'live',
    events: [
      {
        type: 'status.updated',
        timestamp: new Date().toISOString(),
        data: {
          id,
          status: 'in_transit',
          dispatch_date: new Date().toISOString(),
          destination: { postal_code: '75011', country_code: 'FR' },
          prediction: { delivery_window: { min: '2026-11-20', max: '2026-11-21' }, confidence_level: 'High' },
          ui_suggestion: { locale: 'fr-FR', recommended_message: 'Votre carte est en route.', recommended_action: 'None' },
        },
      },
    ],
  });
  const activities = createWebhookDeliveryActivities({ pool, config: configFor() });
  const env = new MockActivityEnvironment({ attempt: 1 }, { logger: quiet });
  const result = await env
    .run(activities.deliverWebhook, { eventId: pair.eventId, endpointId: created.endpoint.id })
    .catch((failure: unknown) => failure as ApplicationFailure);
  const { rows } = await pool.query<{ attempt: number; status_code: number | null; error: string | null; duration_ms: number }>(
    'SELECT attempt, status_code, error, duration_ms FROM delivery_attempts WHERE event_id = $1 AND endpoint_id = $2',
    [pair.eventId, created.endpoint.id],
  );
  expect(rows).toHaveLength(1);
  return { result, logged: rows[0] };
}

/** The attempt failed and its retry is the schedule's first entry (1 min), whatever the answer said. */
function expectRetryInOneMinute(result: unknown) {
  expect(result).toBeInstanceOf(ApplicationFailure);
  expect((result as ApplicationFailure).nextRetryDelay).toBe(60_000);
}

describe('an endpoint that answers in odd ways', () => {
  it('HTTP/1.0, without a length, the connection closed to end the body: delivered', async () => {
    const receiver = await rawReceiver((socket) => socket.end('HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nthanks'));
    const { result, logged } = await firstAttempt(`${receiver.base}/http10`);
    expect(result).toEqual({ outcome: 'delivered', attempts: 1 });
    expect(logged).toMatchObject({ status_code: 200, error: null });
  });

  it('410 Gone and 429 with Retry-After: failed attempts retried on the schedule, not on Retry-After', async () => {
    const gone = await rawReceiver((socket) => socket.end('HTTP/1.1 410 Gone\r\nContent-Length: 0\r\n\r\n'));
    const busy = await rawReceiver((socket) =>
      socket.end('HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7200\r\nContent-Length: 0\r\n\r\n'),
    );
    const first = await firstAttempt(`${gone.base}/gone`);
    expectRetryInOneMinute(first.result);
    expect(first.logged).toMatchObject({ status_code: 410, error: 'HTTP 410' });
    const second = await firstAttempt(`${busy.base}/busy`);
    expectRetryInOneMinute(second.result);
    expect(second.logged).toMatchObject({ status_code: 429, error: 'HTTP 429' });
  });

  it('a 301 or 307: failed, not followed, and the log says so and where it pointed (public or metadata address alike)', async () => {
    const moved = await rawReceiver((socket) =>
      socket.end('HTTP/1.1 301 Moved Permanently\r\nLocation: https://hooks.example.com/v2\r\nContent-Length: 0\r\n\r\n'),
    );
    const inward = await rawReceiver((socket) =>
      socket.end('HTTP/1.1 307 Temporary Redirect\r\nLocation: http://169.254.169.254/latest/meta-data/\r\nContent-Length: 0\r\n\r\n'),
    );
    const first = await firstAttempt(`${moved.base}/moved`);
    expectRetryInOneMinute(first.result);
    expect(first.logged).toMatchObject({
      status_code: 301,
      error: 'HTTP 301: redirects are not followed; the endpoint’s URL must answer 2xx itself (Location: https://hooks.example.com/v2)',
    });
    const second = await firstAttempt(`${inward.base}/inward`);
    expectRetryInOneMinute(second.result);
    expect(second.logged).toMatchObject({
      status_code: 307,
      error:
        'HTTP 307: redirects are not followed; the endpoint’s URL must answer 2xx itself (Location: http://169.254.169.254/latest/meta-data/)',
    });
  });

  it('a connection closed without an answer: the log says the receiver closed it without answering', async () => {
    const receiver = await rawReceiver((socket) => socket.end());
    const { result, logged } = await firstAttempt(`${receiver.base}/hang-up`);
    expectRetryInOneMinute(result);
    expect(logged.status_code).toBeNull();
    expect(logged.error).toBe('the receiver closed the connection without answering');
  });

  it('a connection reset without an answer: the log says the receiver reset it without answering', async () => {
    const receiver = await rawReceiver((socket) => socket.resetAndDestroy());
    const { result, logged } = await firstAttempt(`${receiver.base}/reset`);
    expectRetryInOneMinute(result);
    expect(logged.error).toBe('the receiver reset the connection without answering (ECONNRESET)');
  });

  it('a 500 whose connection is reset mid-body: failed, and the log keeps the status the receiver sent', async () => {
    const receiver = await rawReceiver((socket) => {
      socket.write('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 100\r\n\r\npartial');
      setTimeout(() => socket.resetAndDestroy(), 50);
    });
    const { result, logged } = await firstAttempt(`${receiver.base}/500-reset`);
    expectRetryInOneMinute(result);
    expect(logged.status_code).toBe(500);
    expect(logged.error).toBe("HTTP 500 received, then the receiver reset the connection before the answer's end (ECONNRESET)");
  });

  it('a 200 whose connection closes mid-body: failed as an incomplete answer (as a body trickling past the limit), saying so', async () => {
    const receiver = await rawReceiver((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial');
      setTimeout(() => socket.end(), 50);
    });
    const { result, logged } = await firstAttempt(`${receiver.base}/200-cut`);
    expectRetryInOneMinute(result);
    expect(logged.error).toBe("HTTP 200 received, then the receiver closed the connection before the answer's end");
  });

  it('status and headers at once, then a body that never ends: the timeout names the status received', async () => {
    const receiver = await rawReceiver((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nslow'));
    const { result, logged } = await firstAttempt(`${receiver.base}/200-stuck`);
    expectRetryInOneMinute(result);
    expect(logged.error).toBe('no complete answer within 1500 ms (HTTP 200 received, the rest of its answer was still awaited)');
    expect(logged.duration_ms).toBeLessThan(3000);
  });

  it('no answer at all: the timeout, within the limit', async () => {
    const receiver = await rawReceiver(() => {});
    const { result, logged } = await firstAttempt(`${receiver.base}/silent`);
    expectRetryInOneMinute(result);
    expect(logged.error).toBe('no complete answer within 1500 ms');
    expect(logged.duration_ms).toBeLessThan(3000);
  });

  it('bytes that are not HTTP: the log says the answer is not HTTP', async () => {
    const receiver = await rawReceiver((socket) => socket.end('hello there\r\n\r\n'));
    const { result, logged } = await firstAttempt(`${receiver.base}/not-http`);
    expectRetryInOneMinute(result);
    expect(logged.error).toMatch(/^the answer is not valid HTTP: Expected HTTP\/.* \(HPE_INVALID_CONSTANT\)$/);
  });

  it('headers larger than node accepts: the log says so, and the worker does not read them all', async () => {
    const receiver = await rawReceiver((socket) => socket.write(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`));
    const { result, logged } = await firstAttempt(`${receiver.base}/big-headers`);
    expectRetryInOneMinute(result);
    expect(logged.error).toBe("the answer's headers are larger than 16 KiB (HPE_HEADER_OVERFLOW)");
    await until(() => receiver.closed === 1, 'the sender to close the connection of the oversized headers', 3000);
  });

  it('a 200 with an endless body: delivered at once, the connection closed by the sender after a small read', async () => {
    const receiver = await rawReceiver((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = `ffff\r\n${'z'.repeat(0xffff)}\r\n`;
      const pour = () => {
        while (!socket.destroyed && socket.writable && socket.write(chunk));
        if (!socket.destroyed && socket.writable) socket.once('drain', pour);
      };
      pour();
    });
    const { result, logged } = await firstAttempt(`${receiver.base}/endless`);
    expect(result).toEqual({ outcome: 'delivered', attempts: 1 });
    expect(logged).toMatchObject({ status_code: 200, error: null });
    await until(() => receiver.closed === 1, 'the sender to close the endless answer’s connection', 3000);
  });

  it('nothing listening: the log names the port and the address and says the connection was refused', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const { result, logged } = await firstAttempt(`http://127.0.0.1:${port}/nobody`);
    expectRetryInOneMinute(result);
    expect(logged.error).toBe(`cannot connect to port ${port} at 127.0.0.1 (ECONNREFUSED)`);
  });
});

describe('an endpoint over TLS', () => {
  let port: number;
  // The process's trusted CAs as they were: restored after, since a jest worker runs other files next
  // (two certificates of the same subject trusted at once make OpenSSL pick the wrong one).
  const defaultCAs = tls.getCACertificates('default');
  afterAll(() => tls.setDefaultCACertificates(defaultCAs));
  beforeAll(async () => {
    // Trusted like a public CA's certificate (verification stays on), for `hooks.invalid` only.
    const pems = await selfSignedCertificate('hooks.invalid');
    tls.setDefaultCACertificates([...defaultCAs, pems.cert]);
    const server = https.createServer(pems, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
    servers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  });

  it('whose certificate names another host: refused, and the log says the certificate does not name the URL’s host', async () => {
    const { result, logged } = await firstAttempt(`https://127.0.0.1:${port}/hook`);
    expectRetryInOneMinute(result);
    expect(logged.status_code).toBeNull();
    expect(logged.error).toBe('the TLS certificate does not name 127.0.0.1: it names DNS:hooks.invalid (ERR_TLS_CERT_ALTNAME_INVALID)');
  });
});
