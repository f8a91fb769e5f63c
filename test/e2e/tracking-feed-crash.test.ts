// A tracking feed's provider retries until it gets a 2xx (docs/tracking-feeds.md "Inbound"): a
// process killed with SIGKILL in the middle of an inbound request's work, then the same body sent
// again, must leave the card exactly where an uninterrupted request leaves it, with every webhook
// event of the uninterrupted run and none twice. Each run is compared with a control dispatch that
// got the same history without a crash. The API is a real process (api/main.ts), killed while the
// log statement of the body's second chunk of checkpoints waits on a row lock this test holds (the
// first chunk logged and signalled, ingest/carrier-events.ts ingestMany; the second never signalled);
// the worker is a real process
// (test/support/worker-process.ts), killed while it holds a webhook attempt of the body's changes.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { FEED_PROVIDER_MODULES } from '../../domain/tracking-feeds/index.js';
import { SIGNAL_CHUNK_EVENTS } from '../../ingest/carrier-events.js';
import { bearer, request } from '../api/http.js';
import { randomId, requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint, whenReady } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createFeed, easyPostBody, postInbound, type CreatedFeed } from '../support/tracking-feeds.js';
import { until } from '../support/until.js';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HOUR = 3_600_000;
const SECRET = 'whsec-crash-test-0123456789';

let h: Harness;
let receiver: Receiver;
let key: string;
let feed: CreatedFeed;
const children: ChildProcess[] = [];

/**
 * `scans` + 5 checkpoints (50 by default) over four days, in order: in transit, out for delivery, a
 * failed attempt, out again, delivered.
 */
function history(start: number, scans: number): Array<{ status: string; datetime: string; status_detail?: string }> {
  const at = (hours: number) => new Date(start + hours * HOUR).toISOString();
  const transit = Array.from({ length: scans }, (_, i) => ({ status: 'in_transit', datetime: at(1 + (i * 66) / (scans - 1)) }));
  return [
    ...transit,
    { status: 'out_for_delivery', datetime: at(70) },
    { status: 'failure', status_detail: 'delivery_exception', datetime: at(74) },
    { status: 'out_for_delivery', datetime: at(90) },
    { status: 'in_transit', datetime: at(91) },
    { status: 'delivered', datetime: at(94) },
  ];
}

const START = Date.now() - 100 * HOUR;

async function dispatchWithBody(scans = 45): Promise<{ id: string; raw: string }> {
  const number = `CRASH${Math.floor(Math.random() * 1e12)}`;
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: { id, tracking_number: number, dispatch_date: new Date(START).toISOString(), destination: { postal_code: '62701', country_code: 'US' } }, // prettier-ignore
  });
  expect(res.status).toBe(201);
  return { id, raw: easyPostBody(number, history(START, scans)) };
}

/**
 * The webhook events the receiver got for a dispatch: each event id once, with its status, sorted by
 * it (the spec: arrival order is not guaranteed; each change's deliveries are activities of their own).
 */
function webhookEvents(id: string): Array<{ eventId: string; status: string; sent: number }> {
  const events = new Map<string, { eventId: string; status: string; sent: number }>();
  for (const r of receiver.requests) {
    const body = JSON.parse(r.body.toString('utf8'));
    if (body.data?.id !== id) continue;
    const eventId = r.headers['x-service-event-id'] as string;
    const seen = events.get(eventId);
    if (seen) seen.sent += 1;
    else events.set(eventId, { eventId, status: `${body.event}:${body.data.status}`, sent: 1 });
  }
  return [...events.values()].sort((a, b) => a.status.localeCompare(b.status));
}

/** Deliveries of the dispatch's webhook events still pending (written with the change that made the event). */
const pendingDeliveries = async (id: string) =>
  (await h.pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.dispatch_id = $1 AND d.state = 'pending'`, [id])).rows[0].n as number; // prettier-ignore

/**
 * Waits until the card is delivered, every webhook delivery of it finished and no webhook for it
 * arrived for 2 s; returns its webhook events. Quiet alone is not enough: a delivery that the killed
 * worker had started but not yet sent is retried only when its heartbeat times out (10 s,
 * workflows/delivery-options.ts), long after the others arrived.
 */
async function settled(id: string) {
  await until(async () => (await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) })).body.status === 'delivered', `${id} delivered`, 60_000); // prettier-ignore
  await until(async () => (await pendingDeliveries(id)) === 0, `every webhook delivery of ${id} finished`, 60_000);
  let count = -1;
  await until(
    async () => {
      const now = receiver.requests.length;
      const quiet = now === count;
      count = now;
      await new Promise((resolve) => setTimeout(resolve, 2000));
      return quiet && receiver.requests.length === now;
    },
    'the webhooks to settle',
    60_000,
  );
  return webhookEvents(id);
}

/** Every webhook event made for the dispatch (of every type, subscribed or not), by type: each made once, as for the control. */
const webhookEventTypes = async (id: string) =>
  (await h.pool.query('SELECT type FROM webhook_events WHERE dispatch_id = $1 ORDER BY type', [id])).rows.map((row) => row.type as string);

const utcToday = () => new Date().toISOString().slice(0, 10);

/**
 * Expects the crashed dispatch's webhook events to be the control's, by type. A delivery.predicted is
 * made when a change moves the window, and windows move with the UTC day (a passed one starts on
 * today's business day, an exception's from today): when midnight passed between `since` (a day
 * read before the control's body was sent) and now, those are left out of the comparison.
 */
async function expectSameEventTypes(crashedId: string, controlId: string, since: string): Promise<void> {
  const comparable = (types: string[]) => (utcToday() === since ? types : types.filter((type) => type !== 'delivery.predicted'));
  expect(comparable(await webhookEventTypes(crashedId))).toEqual(comparable(await webhookEventTypes(controlId)));
}

async function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test', 'support', 'worker-process.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? ROOT,
      DATABASE_URL: h.config.DATABASE_URL!,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      TEST_WORKFLOW_BUNDLE: requireTestEnv('TEST_WORKFLOW_BUNDLE'),
      TEST_WORKER_NAME: randomId('feed-crash-worker'),
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  await whenReady(child, 'worker ready', 'the worker');
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  h = await startHarness({ worker: false, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  const issuerId = await h.createIssuer('Feed Crash Issuer');
  key = (await h.createKey(issuerId)).key;
  const created = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated', 'delivery.exception'] });
  if (!created.ok) throw new Error(created.reason);
  feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
}, 60_000);

afterEach(async () => {
  for (const child of children.splice(0)) await kill(child);
});

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('an inbound request interrupted by a killed process, then sent again', () => {
  it('API killed between two chunks of the body: the retry ends in the same state, every webhook once', async () => {
    await startWorker();
    const since = utcToday();
    // Two chunks: the first SIGNAL_CHUNK_EVENTS checkpoints, then 50 more.
    const scans = SIGNAL_CHUNK_EVENTS + 45;
    const control = await dispatchWithBody(scans);
    expect((await postInbound(h.baseUrl, 'easypost', feed, control.raw)).status).toBe(200);
    const expected = await settled(control.id);

    const crashed = await dispatchWithBody(scans);
    const port = await freePort();
    const api = await startEntryPoint(
      'api/main.ts',
      {
        DATABASE_URL: h.config.DATABASE_URL!,
        TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
        TEMPORAL_TASK_QUEUE: h.taskQueue,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info', // 'API listening' is an info line
      },
      'API listening',
    );
    children.push(api.child);
    // The second chunk's log statement waits on this uncommitted row of the key of its 30th checkpoint.
    const parsed = FEED_PROVIDER_MODULES.easypost.parse(JSON.parse(crashed.raw));
    if (!parsed.ok) throw new Error(parsed.message);
    const held = parsed.trackings[0].checkpoints[SIGNAL_CHUNK_EVENTS + 29];
    const lock = await h.pool.connect();
    try {
      await lock.query('BEGIN');
      await lock.query(`INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at) VALUES ($1, $2, 'in_transit', now())`, [crashed.id, `id:${held.eventId}`]); // prettier-ignore
      const interrupted = postInbound(`http://127.0.0.1:${port}`, 'easypost', feed, crashed.raw).catch((error: Error) => error);
      await until(async () => {
        const { rows } = await h.pool.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'card-delivery-api' AND wait_event_type = 'Lock'`); // prettier-ignore
        return rows.length > 0;
      }, 'the API to wait on the held checkpoint');
      await kill(api.child);
      // The connection died with the process: no answer, so the provider will retry.
      expect(await interrupted).not.toHaveProperty('status');
    } finally {
      await lock.query('ROLLBACK');
      lock.release();
    }
    // The worker folds the first chunk (the card in transit); the second, whether or not its statement
    // committed after the process died, never reached the workflow: none of its events has an effect.
    const folded = async () =>
      (await h.pool.query('SELECT count(*)::int AS n FROM carrier_events WHERE dispatch_id = $1 AND effect IS NOT NULL', [crashed.id])).rows[0].n as number; // prettier-ignore
    await until(async () => (await folded()) >= SIGNAL_CHUNK_EVENTS, 'the first chunk folded');
    expect(await folded()).toBe(SIGNAL_CHUNK_EVENTS);
    expect((await request(h.baseUrl, `/v1/status/${crashed.id}`, { headers: bearer(key) })).body.status).toBe('in_transit');

    const retried = await postInbound(h.baseUrl, 'easypost', feed, crashed.raw);
    expect(retried.status).toBe(200);
    const got = await settled(crashed.id);
    expect(got.map((e) => e.status)).toEqual(expected.map((e) => e.status));
    expect(got.every((e) => e.sent === 1)).toBe(true);
    await expectSameEventTypes(crashed.id, control.id, since);
  }, 180_000);

  it('worker killed while a webhook of the body is in flight: the retry ends in the same state, no webhook event lost or made twice', async () => {
    const first = await startWorker();
    const since = utcToday();
    const control = await dispatchWithBody();
    expect((await postInbound(h.baseUrl, 'easypost', feed, control.raw)).status).toBe(200);
    const expected = await settled(control.id);

    const crashed = await dispatchWithBody();
    let release!: () => void;
    const heldAnswer = new Promise<number>((resolve) => (release = () => resolve(200)));
    receiver.respond = (n) => (webhookEvents(crashed.id).length === 1 && n === receiver.requests.length ? heldAnswer : 200);
    const firstPost = postInbound(h.baseUrl, 'easypost', feed, crashed.raw);
    // The body's changes fire their webhooks at once (its checkpoints come on one signal): more may
    // arrive after the held first one.
    await until(() => webhookEvents(crashed.id).length >= 1, 'the first webhook of the body to arrive');
    await kill(first);
    release();
    expect((await firstPost).status).toBe(200);
    await startWorker();

    const retried = await postInbound(h.baseUrl, 'easypost', feed, crashed.raw);
    expect(retried.status).toBe(200);
    const got = await settled(crashed.id);
    expect(got.map((e) => e.status)).toEqual(expected.map((e) => e.status));
    await expectSameEventTypes(crashed.id, control.id, since);
  }, 180_000);
});
