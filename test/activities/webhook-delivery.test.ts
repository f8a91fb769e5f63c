// The webhook delivery activity (docs/webhooks.md) against a REAL local HTTP receiver and the
// real test Postgres. Temporal's activity context is played by MockActivityEnvironment (it sets the
// attempt number); the retry schedule itself is proven by the workflow tests on the time-skipping
// server. Checks: signatures verify (consumer kit, standardwebhooks), the body and event id are
// identical across attempts, slow and non-2xx answers fail with the schedule's delay, the last
// failure is undeliverable, redirects are not followed, and every attempt is logged.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Webhook } from 'standardwebhooks';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery.js';
import { createIssuer } from '../../db/issuers.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import type { WebhookEventType } from '../../domain/vocabulary.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEvents } from '../support/webhook-events.js';
import { createWebhookEndpoint, removeWebhookEndpoint, rotateWebhookSecret } from '../../db/webhook-endpoints.js';
import { claimDelivery } from '../../db/webhooks.js';
import { loadConfig } from '../../platform/config.js';
import type { HostLookup } from '../../platform/ssrf-guard.js';
import { parse, verify, verifyRequest } from '../../consumer-kit/src/index.js';
import { requireTestEnv } from '../support/env.js';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A consumer endpoint: each path answers as told (status, delay); every request is kept. */
function startReceiver() {
  const received: Received[] = [];
  const behaviour = new Map<string, { status?: number; delayMs?: number; headers?: Record<string, string>; trickle?: { everyMs: number; forMs: number } }>(); // prettier-ignore
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const how = behaviour.get(req.url ?? '') ?? {};
      if (how.trickle) {
        // Headers at once, then the body one byte at a time until `forMs` have passed.
        const { everyMs, forMs } = how.trickle;
        res.writeHead(how.status ?? 200, { 'Content-Type': 'text/plain' });
        const started = Date.now();
        const drip = setInterval(() => {
          if (res.destroyed || Date.now() - started >= forMs) {
            clearInterval(drip);
            if (!res.destroyed) res.end('.');
          } else res.write('.');
        }, everyMs);
        return;
      }
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(how.status ?? 200, { 'Content-Type': 'text/plain', ...how.headers });
        res.end(`answer from ${req.url}`);
      }, how.delayMs ?? 0);
    });
  });
  return {
    received,
    behaviour,
    listen: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))), // prettier-ignore
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    on: (path: string) => received.filter((r) => r.path === path),
  };
}

const SCHEDULE_MS = [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000];
const configFor = (env: Record<string, string> = {}) =>
  loadConfig({ WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '1m,5m,30m,2h,8h', ...env });

let pool: Pool;
let issuerId: string;
let base: string;
const receiver = startReceiver();
const activities = () => createWebhookDeliveryActivities({ pool, config: configFor() });

function record(id = randomUUID()): StatusRecord {
  return {
    id,
    status: 'delivered',
    dispatch_date: '2026-11-18T08:00:00.000Z',
    destination: { postal_code: '75011', country_code: 'FR' },
    prediction: { delivery_window: { min: '2026-11-20', max: '2026-11-20' }, confidence_level: 'High' },
    ui_suggestion: { locale: 'fr-FR', recommended_message: 'Votre carte est arrivée.', recommended_action: 'Activate' },
  };
}

async function endpoint(path: string, events: WebhookEventType[] = ['status.updated', 'delivery.completed']) {
  const created = await createWebhookEndpoint(pool, { issuerId, url: `${base}${path}`, events });
  if (!created.ok) throw new Error(created.reason);
  return { id: created.endpoint.id, secret: created.secret };
}

async function oneEvent(type: WebhookEventType = 'delivery.completed') {
  const data = record();
  const pairs = await createWebhookEvents(pool, {
    dispatchId: data.id,
    issuerId,
    mode: 'live',
    events: [{ type, timestamp: '2026-11-20T10:00:00.000Z', data }],
  });
  return { data, pairs };
}

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** Runs the activity as Temporal would on its given run (Temporal's attempt counter); a thrown failure is returned. */
async function attemptDelivery(input: { eventId: string; endpointId: string }, temporalAttempt: number, run = activities()) {
  const env = new MockActivityEnvironment({ attempt: temporalAttempt }, { logger: quiet });
  return env.run(run.deliverWebhook, input).catch((failure: unknown) => failure as ApplicationFailure);
}

/** The test database's pool, except that the statements `fails` picks fail as a dropped connection does. */
function failingPool(fails: (text: string, values: unknown[]) => boolean): Pool {
  return new Proxy(pool, {
    get(target, property) {
      if (property === 'query') {
        return (query: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
          const text = typeof query === 'string' ? query : query.text;
          if (fails(text, (typeof query === 'string' ? values : query.values) ?? [])) {
            return Promise.reject(new Error('Connection terminated unexpectedly'));
          }
          return typeof query === 'string' ? target.query(query, values) : target.query(query);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function attemptsLogged(eventId: string, endpointId: string) {
  const { rows } = await pool.query(
    'SELECT attempt, status_code, error, duration_ms, response_head FROM delivery_attempts WHERE event_id = $1 AND endpoint_id = $2 ORDER BY id',
    [eventId, endpointId],
  );
  return rows;
}

beforeAll(async () => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 4, applicationName: 'test-webhook-delivery' });
  issuerId = (await createIssuer(pool, 'Webhook Issuer')).id;
  base = await receiver.listen();
});

afterAll(async () => {
  await receiver.close();
  await pool?.end();
});

describe('createWebhookEvents', () => {
  it('creates a delivery only for the endpoints subscribed to the event type', async () => {
    const completed = await endpoint('/filter-completed', ['delivery.completed']);
    const predicted = await endpoint('/filter-predicted', ['delivery.predicted']);
    const { pairs } = await oneEvent('delivery.completed');
    const endpoints = pairs.map((p) => p.endpointId);
    expect(endpoints).toContain(completed.id);
    expect(endpoints).not.toContain(predicted.id);
  });

  it('returns the rows it made, and makes no new ones, when called again with the same idempotency keys', async () => {
    const hook = await endpoint('/idempotent');
    const data = record();
    const input = {
      dispatchId: data.id,
      issuerId,
      mode: 'live' as const,
      events: [
        { type: 'status.updated' as const, timestamp: '2026-11-20T10:00:00.000Z', data, idempotencyKey: `${data.id}:3:status.updated` },
        { type: 'delivery.completed' as const, timestamp: '2026-11-20T10:00:00.000Z', data, idempotencyKey: `${data.id}:3:delivery.completed` }, // prettier-ignore
      ],
    };
    const first = await createWebhookEvents(pool, input);
    const again = await createWebhookEvents(pool, input);
    expect(again).toEqual(first);
    expect(first.filter((p) => p.endpointId === hook.id)).toHaveLength(2);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM webhook_events WHERE dispatch_id = $1', [data.id]);
    expect(rows[0].n).toBe(2);
  });

  it('stores the body once as the exact envelope { event, timestamp, data }', async () => {
    await endpoint('/stored');
    const { data, pairs } = await oneEvent();
    const { rows } = await pool.query('SELECT body FROM webhook_events WHERE id = $1', [pairs[0].eventId]);
    expect((rows[0].body as Buffer).toString('utf8')).toBe(
      JSON.stringify({ event: 'delivery.completed', timestamp: '2026-11-20T10:00:00.000Z', data }),
    );
  });
});

describe('deliverWebhook', () => {
  // An issuer has at most 20 endpoints: each test here gets an issuer of its own.
  beforeEach(async () => {
    issuerId = (await createIssuer(pool, 'Webhook Delivery Issuer')).id;
  });

  it('delivers on a 2xx, with signatures that verify with the consumer kit and with standardwebhooks', async () => {
    const hook = await endpoint('/ok');
    const { data, pairs } = await oneEvent();
    const pair = pairs.find((p) => p.endpointId === hook.id)!;
    expect(await attemptDelivery(pair, 1)).toEqual({ outcome: 'delivered', attempts: 1 });

    const [request] = receiver.on('/ok');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-service-event-id']).toBe(pair.eventId);
    expect(request.headers['x-service-delivery-attempt']).toBe('1');
    expect(verify(request.body, request.headers['x-service-signature'] as string, hook.secret)).toBe(true);
    expect(verifyRequest(request.body, request.headers, hook.secret)).toEqual({ ok: true });
    expect(() => new Webhook(hook.secret).verify(request.body, request.headers as Record<string, string>)).not.toThrow();
    expect(parse(request.body).data).toEqual(data);
  });

  it('records the attempt: number, status code, duration and the first bytes of the response', async () => {
    const hook = await endpoint('/logged');
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    await attemptDelivery(pair, 1);
    const [logged] = await attemptsLogged(pair.eventId, hook.id);
    expect(logged).toMatchObject({ attempt: 1, status_code: 200, error: null });
    expect(logged.duration_ms).toBeGreaterThanOrEqual(0);
    expect((logged.response_head as Buffer).toString()).toBe('answer from /logged');
    const { rows } = await pool.query('SELECT state, attempts FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [
      pair.eventId,
      hook.id,
    ]);
    expect(rows[0]).toEqual({ state: 'delivered', attempts: 1 });
  });

  it('sends the identical body and event id on every attempt, with the attempt number', async () => {
    const hook = await endpoint('/flaky');
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    receiver.behaviour.set('/flaky', { status: 503 });
    await attemptDelivery(pair, 1);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // a later webhook-timestamp
    receiver.behaviour.set('/flaky', { status: 200 });
    expect(await attemptDelivery(pair, 2)).toEqual({ outcome: 'delivered', attempts: 2 });
    const [first, second] = receiver.on('/flaky');
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers['x-service-event-id']).toBe(first.headers['x-service-event-id']);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect([first.headers['x-service-delivery-attempt'], second.headers['x-service-delivery-attempt']]).toEqual(['1', '2']);
    expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']));
  });

  it.each([1, 2, 3, 4, 5])('fails attempt %i on a non-2xx with nextRetryDelay = the schedule entry', async (attempt) => {
    const hook = await endpoint(`/500-${attempt}`);
    receiver.behaviour.set(`/500-${attempt}`, { status: 500 });
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    let failure: unknown;
    for (let run = 1; run <= attempt; run += 1) failure = await attemptDelivery(pair, run);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).nonRetryable).toBe(false);
    expect((failure as ApplicationFailure).nextRetryDelay).toBe(SCHEDULE_MS[attempt - 1]);
    expect((await attemptsLogged(pair.eventId, hook.id))[attempt - 1]).toMatchObject({ attempt, status_code: 500, error: 'HTTP 500' });
  });

  it('numbers an attempt by the attempts logged, so a run that never logged one (worker crash, database down) does not use up a number', async () => {
    const hook = await endpoint('/after-crash');
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    // Temporal's third run of the activity, the first two having died before they logged anything.
    expect(await attemptDelivery(pair, 3)).toEqual({ outcome: 'delivered', attempts: 1 });
    expect(receiver.on('/after-crash')[0].headers['x-service-delivery-attempt']).toBe('1');
    expect(await attemptsLogged(pair.eventId, hook.id)).toEqual([expect.objectContaining({ attempt: 1, status_code: 200 })]);
  });

  it('a replay taking a delivery over counts an attempt that may be in flight as made (the cycle’s sixth: a new cycle), not one whose driver is overdue', async () => {
    const hook = await endpoint('/taken-over');
    const pairs: Array<{ eventId: string; endpointId: string }> = [];
    for (let i = 0; i < 3; i += 1) pairs.push((await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!);
    const sending = (pair: { eventId: string }, attempts: number, dueInSeconds: number) =>
      pool.query(
        `UPDATE webhook_deliveries SET driver = 'dispatch:old', attempts = $2, sending_attempt = $2 + 1,
                driver_due_at = now() + $3 * interval '1 second' WHERE event_id = $1 AND endpoint_id = $4`,
        [pair.eventId, attempts, dueInSeconds, hook.id],
      );
    await sending(pairs[0], 2, 60); // attempt 3 in flight
    await sending(pairs[1], 5, 60); // attempt 6, the cycle's last, in flight
    await sending(pairs[2], 2, -600); // attempt 3 never got out: its run died long ago
    const claim = (pair: { eventId: string }) => claimDelivery(pool, pair.eventId, hook.id, { driver: 'replay-x', takeOver: true, lastAttempt: 6 }); // prettier-ignore
    expect(await claim(pairs[0])).toMatchObject({ state: 'pending', attempts: 3 });
    expect(await claim(pairs[1])).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await claim(pairs[2])).toMatchObject({ state: 'pending', attempts: 2 });
  });

  it('counts an answer slower than WEBHOOK_TIMEOUT_MS as failed', async () => {
    const hook = await endpoint('/slow');
    receiver.behaviour.set('/slow', { delayMs: 1500 });
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    const failure = await attemptDelivery(pair, 1);
    expect((failure as ApplicationFailure).nextRetryDelay).toBe(60_000);
    const [logged] = await attemptsLogged(pair.eventId, hook.id);
    expect(logged.status_code).toBeNull();
    expect(logged.error).toMatch(/no complete answer within 500 ms/);
    expect(logged.duration_ms).toBeGreaterThanOrEqual(490);
    expect(logged.duration_ms).toBeLessThan(1400);
  });

  it('with the real 5 s limit: a 4.5 s answer is delivered, a 6 s answer fails', async () => {
    const fast = await endpoint('/in-4500ms');
    const slow = await endpoint('/in-6000ms');
    receiver.behaviour.set('/in-4500ms', { delayMs: 4500 });
    receiver.behaviour.set('/in-6000ms', { delayMs: 6000 });
    const { pairs } = await oneEvent();
    const run = createWebhookDeliveryActivities({ pool, config: configFor({ WEBHOOK_TIMEOUT_MS: '5000' }) });
    const [inTime, late] = await Promise.all([
      attemptDelivery(
        pairs.find((p) => p.endpointId === fast.id)!,
        1,
        run,
      ),
      attemptDelivery(
        pairs.find((p) => p.endpointId === slow.id)!,
        1,
        run,
      ),
    ]);
    expect(inTime).toEqual({ outcome: 'delivered', attempts: 1 });
    expect(late).toBeInstanceOf(ApplicationFailure);
    expect((await attemptsLogged(pairs[0].eventId, slow.id))[0].error).toMatch(/within 5000 ms/);
  }, 20_000);

  it('with the real 5 s limit: headers at once then a body trickling past 5 s fail the attempt at 5 s, as a timeout', async () => {
    const hook = await endpoint('/trickle');
    receiver.behaviour.set('/trickle', { trickle: { everyMs: 250, forMs: 9000 } });
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    const run = createWebhookDeliveryActivities({ pool, config: configFor({ WEBHOOK_TIMEOUT_MS: '5000' }) });
    const failure = await attemptDelivery(pair, 1, run);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).nextRetryDelay).toBe(60_000);
    const [logged] = await attemptsLogged(pair.eventId, hook.id);
    expect(logged.error).toMatch(/within 5000 ms/);
    expect(logged.duration_ms).toBeGreaterThanOrEqual(4900);
    // Bounded by the limit, not by the body's end at 9 s.
    expect(logged.duration_ms).toBeLessThan(7000);
  }, 20_000);

  it('marks the delivery undeliverable and returns (no throw) when attempt 6 fails', async () => {
    const hook = await endpoint('/always-500');
    receiver.behaviour.set('/always-500', { status: 500 });
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    for (let run = 1; run <= 5; run += 1) expect(await attemptDelivery(pair, run)).toBeInstanceOf(ApplicationFailure);
    expect(await attemptDelivery(pair, 6)).toEqual({ outcome: 'undeliverable', attempts: 6 });
    const { rows } = await pool.query('SELECT state FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [
      pair.eventId,
      hook.id,
    ]);
    expect(rows[0].state).toBe('undeliverable');
  });

  it('does not follow a redirect: a 302 is a failed attempt and the target is never called', async () => {
    const hook = await endpoint('/moved');
    receiver.behaviour.set('/moved', { status: 302, headers: { Location: `${base}/redirect-target` } });
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    expect(await attemptDelivery(pair, 1)).toBeInstanceOf(ApplicationFailure);
    expect(receiver.on('/redirect-target')).toHaveLength(0);
    expect((await attemptsLogged(pair.eventId, hook.id))[0]).toMatchObject({
      status_code: 302,
      error: expect.stringMatching(/^HTTP 302: redirects are not followed/),
    });
  });

  it('re-checks the URL at every attempt: a private target is refused without WEBHOOK_ALLOW_PRIVATE_NETWORKS', async () => {
    const hook = await endpoint('/private');
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    const strict = createWebhookDeliveryActivities({ pool, config: configFor({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }) });
    expect(await attemptDelivery(pair, 1, strict)).toBeInstanceOf(ApplicationFailure);
    expect(receiver.on('/private')).toHaveLength(0);
    expect((await attemptsLogged(pair.eventId, hook.id))[0].error).toMatch(/refused: 127\.0\.0\.1 is in a loopback range/);
  });

  describe('a host name that resolves to several addresses', () => {
    // DNS is outside the system: the resolver the activities are given stands in for it.
    const resolvesTo =
      (name: string, ...addresses: string[]): HostLookup =>
      async (host) => {
        if (host !== name) throw Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' });
        return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      };

    it('skips a first address that refuses the connection: the second receives the signed POST, with the URL’s Host', async () => {
      const port = new URL(base).port;
      const created = await createWebhookEndpoint(pool, { issuerId, url: `http://hooks.two-records.test:${port}/two-records`, events: ['delivery.completed'] }); // prettier-ignore
      if (!created.ok) throw new Error(created.reason);
      const pair = (await oneEvent()).pairs.find((p) => p.endpointId === created.endpoint.id)!;
      // Nothing listens on 127.0.0.2 at the receiver's port: that address refuses, as a host's dead A record does.
      const lookup = resolvesTo('hooks.two-records.test', '127.0.0.2', '127.0.0.1');
      const run = createWebhookDeliveryActivities({ pool, config: configFor(), lookup });
      expect(await attemptDelivery(pair, 1, run)).toEqual({ outcome: 'delivered', attempts: 1 });
      const [request] = receiver.on('/two-records');
      expect(request.headers.host).toBe(`hooks.two-records.test:${port}`);
      expect(verifyRequest(request.body, request.headers, created.secret)).toEqual({ ok: true });
      expect(await attemptsLogged(pair.eventId, created.endpoint.id)).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null })]); // prettier-ignore
    });

    it('refuses the attempt, sending nothing, when any one of the addresses is private', async () => {
      const port = new URL(base).port;
      const created = await createWebhookEndpoint(pool, { issuerId, url: `http://hooks.mixed.test:${port}/mixed`, events: ['delivery.completed'] }); // prettier-ignore
      if (!created.ok) throw new Error(created.reason);
      const pair = (await oneEvent()).pairs.find((p) => p.endpointId === created.endpoint.id)!;
      const lookup = resolvesTo('hooks.mixed.test', '93.184.215.14', '127.0.0.1');
      const strict = createWebhookDeliveryActivities({ pool, config: configFor({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }), lookup });
      expect(await attemptDelivery(pair, 1, strict)).toBeInstanceOf(ApplicationFailure);
      expect(receiver.on('/mixed')).toHaveLength(0);
      expect((await attemptsLogged(pair.eventId, created.endpoint.id))[0].error).toMatch(/refused: 127\.0\.0\.1 is in a loopback range/);
    });

    it('logs each address and why when none accepts the connection', async () => {
      const port = new URL(base).port;
      const created = await createWebhookEndpoint(pool, { issuerId, url: `http://hooks.nowhere.test:${port}/nowhere`, events: ['delivery.completed'] }); // prettier-ignore
      if (!created.ok) throw new Error(created.reason);
      const pair = (await oneEvent()).pairs.find((p) => p.endpointId === created.endpoint.id)!;
      // The receiver listens on 127.0.0.1 only: both addresses refuse.
      const run = createWebhookDeliveryActivities({ pool, config: configFor(), lookup: resolvesTo('hooks.nowhere.test', '127.0.0.2', '127.0.0.3') }); // prettier-ignore
      expect(await attemptDelivery(pair, 1, run)).toBeInstanceOf(ApplicationFailure);
      expect(await attemptsLogged(pair.eventId, created.endpoint.id)).toEqual([
        expect.objectContaining({ attempt: 1, status_code: null, error: `cannot connect to port ${port} at 127.0.0.2 (ECONNREFUSED), 127.0.0.3 (ECONNREFUSED)` }), // prettier-ignore
      ]);
    });
  });

  it('skips, and records why, when the endpoint was removed after the event was created', async () => {
    const hook = await endpoint('/removed');
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    await removeWebhookEndpoint(pool, hook.id);
    expect(await attemptDelivery(pair, 1)).toEqual({ outcome: 'skipped', attempts: 0 });
    expect(receiver.on('/removed')).toHaveLength(0);
    const { rows } = await pool.query('SELECT state, skipped_reason FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [
      pair.eventId,
      hook.id,
    ]);
    expect(rows[0]).toEqual({ state: 'skipped', skipped_reason: 'endpoint removed' });
  });

  it('skips when the endpoint unsubscribed from the event type meanwhile', async () => {
    const hook = await endpoint('/unsubscribed');
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    await pool.query(`UPDATE webhook_endpoints SET events = '{status.updated}' WHERE id = $1`, [hook.id]);
    expect(await attemptDelivery(pair, 1)).toEqual({ outcome: 'skipped', attempts: 0 });
  });

  it('during a secret rotation, requests verify with the old and the new secret, and X-Service-Signature switches at switch-at', async () => {
    const hook = await endpoint('/rotating');
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    receiver.behaviour.set('/rotating', { status: 500 });
    const rotated = (await rotateWebhookSecret(pool, hook.id, { overlapMs: 3_600_000, switchAt: new Date(Date.now() + 1_800_000) }))!;
    await attemptDelivery(pair, 1);
    const [before] = receiver.on('/rotating');
    expect(verify(before.body, before.headers['x-service-signature'] as string, hook.secret)).toBe(true);
    expect(verifyRequest(before.body, before.headers, [rotated.secret, hook.secret])).toEqual({ ok: true });
    expect(() => new Webhook(hook.secret).verify(before.body, before.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(rotated.secret).verify(before.body, before.headers as Record<string, string>)).not.toThrow();

    await pool.query('UPDATE webhook_endpoints SET signature_switch_at = now() WHERE id = $1', [hook.id]);
    await attemptDelivery(pair, 2);
    const [, after] = receiver.on('/rotating');
    expect(verify(after.body, after.headers['x-service-signature'] as string, rotated.secret)).toBe(true);
    expect(() => new Webhook(hook.secret).verify(after.body, after.headers as Record<string, string>)).not.toThrow();
  });
});

describe('a failed attempt’s retry waits for the schedule’s delay, whatever fails after its record', () => {
  // Spec Events rule 4: the retry after attempt N waits the schedule's Nth delay. A run that failed
  // after recording its failed attempt would be retried by Temporal's policy about 1 s later.
  const shortSchedule = () => configFor({ WEBHOOK_RETRY_SCHEDULE: '2s,2s,2s,2s,2s' });
  const sentAttempts = (path: string) => receiver.on(path).map((r) => r.headers['x-service-delivery-attempt']);

  beforeEach(async () => {
    issuerId = (await createIssuer(pool, 'Webhook Early Run Issuer')).id;
  });

  it('deliverWebhook: an endpoint-health write that fails after the record does not fail the run, which ends with the schedule’s delay', async () => {
    const hook = await endpoint('/health-write-fails');
    receiver.behaviour.set('/health-write-fails', { status: 500 });
    const pair = (await oneEvent()).pairs.find((p) => p.endpointId === hook.id)!;
    const health = (text: string) => text.includes('UPDATE webhook_endpoints') && text.includes('failing_since_temporal = CASE');
    const activities = createWebhookDeliveryActivities({ pool: failingPool(health), config: shortSchedule() });
    const failure = await new MockActivityEnvironment({ attempt: 1 }, { logger: quiet })
      .run(activities.deliverWebhook, pair)
      .catch((error: unknown) => error as Error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe('WebhookAttemptFailed');
    expect((failure as ApplicationFailure).nextRetryDelay).toBe(2000);
    expect(sentAttempts('/health-write-fails')).toEqual(['1']);
    expect(await attemptsLogged(pair.eventId, hook.id)).toEqual([expect.objectContaining({ attempt: 1, status_code: 500 })]);
  });

  it('deliverWebhooks: one delivery’s database error fails the run only once its siblings have recorded; the retried run sends none of theirs early', async () => {
    const slow = await endpoint('/sibling-slow-500');
    const lost = await endpoint('/sibling-unrecorded');
    receiver.behaviour.set('/sibling-slow-500', { status: 500, delayMs: 300 });
    const { pairs } = await oneEvent();
    const deliveries = [slow, lost].map((hook) => pairs.find((p) => p.endpointId === hook.id)!);
    const change = (activities: ReturnType<typeof createWebhookDeliveryActivities>, temporalAttempt: number) =>
      new MockActivityEnvironment({ attempt: temporalAttempt }, { logger: quiet }).run(activities.deliverWebhooks, {
        deliveries,
        driver: 'dispatch:early-run',
      });
    // The second delivery's attempt is answered 200 at once, and its record fails.
    const record = (text: string, values: unknown[]) => text.includes('INSERT INTO delivery_attempts') && values[1] === lost.id;
    const broken = createWebhookDeliveryActivities({ pool: failingPool(record), config: shortSchedule() });
    await expect(change(broken, 1)).rejects.toThrow('Connection terminated unexpectedly');
    // The run ended after the slow sibling's attempt was recorded: none of it is still sending.
    expect(await attemptsLogged(deliveries[0].eventId, slow.id)).toEqual([expect.objectContaining({ attempt: 1, status_code: 500 })]);

    const results = await change(createWebhookDeliveryActivities({ pool, config: shortSchedule() }), 2);
    expect(results).toEqual([
      { outcome: 'retry', attempts: 1, delayMs: expect.any(Number), type: 'WebhookRetryNotDue', message: expect.any(String) },
      { outcome: 'delivered', attempts: 1 },
    ]);
    const [{ delayMs }] = results as Array<{ delayMs: number }>;
    expect(delayMs).toBeGreaterThan(0);
    expect(delayMs).toBeLessThanOrEqual(2000);
    expect(sentAttempts('/sibling-slow-500')).toEqual(['1']);
    // The unrecorded attempt is sent again with its number (at least once, docs/webhooks.md "Crash guarantees").
    expect(sentAttempts('/sibling-unrecorded')).toEqual(['1', '1']);
    const { rows } = await pool.query(
      `SELECT state, attempts, sending_attempt, driver_due_at > now() + interval '2 minutes' AS waiting
         FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2`,
      [deliveries[0].eventId, slow.id],
    );
    // Nothing marked in flight, and the reconciler does not take the waiting retry for an orphan.
    expect(rows[0]).toEqual({ state: 'pending', attempts: 1, sending_attempt: null, waiting: true });

    // The workflow waits the delay left, then drives the delivery on: attempt 2.
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const retried = createWebhookDeliveryActivities({ pool, config: shortSchedule() });
    const next = await new MockActivityEnvironment({ attempt: 1 }, { logger: quiet })
      .run(retried.deliverWebhook, { ...deliveries[0], driver: 'dispatch:early-run' })
      .catch((error: unknown) => error as ApplicationFailure);
    expect((next as ApplicationFailure).nextRetryDelay).toBe(2000);
    expect(sentAttempts('/sibling-slow-500')).toEqual(['1', '2']);
  });
});
