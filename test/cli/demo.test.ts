// `npm start`'s demo issuer and demo webhook (cli/demo.ts, cli/demo-receiver.ts) against the real test
// Postgres: one issuer, key and endpoint however many launchers start at once; an endpoint made once
// (kept, moved to a new DEMO_WEBHOOK_PORT, never made again once removed); its receiver verifying each
// webhook with the consumer kit and logging ids only; and the delivery activity reaching that receiver
// for the demo endpoint alone while every other loopback URL is still refused.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery.js';
import { ensureDemoIssuer, type Demo } from '../../cli/demo.js';
import { demoReceiverUrl, startDemoReceiver, type DemoReceiver } from '../../cli/demo-receiver.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint, removeWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { freePort } from '../../devtools/postgres.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import { signedHeaders } from '../../domain/signing.js';
import { loadConfig } from '../../platform/config.js';
import { requireTestEnv } from '../support/env.js';
import { createWebhookEvents } from '../support/webhook-events.js';

let pool: Pool;
const receivers: DemoReceiver[] = [];

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 6, applicationName: 'test-demo' });
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await pool?.end();
});

/** A demo issuer of this test's own (its own name), with a receiver URL on `port`; `served` collects each serve call. */
function demoRun(name: string, port: number, served: string[] = [], serve?: () => Promise<void>) {
  return ensureDemoIssuer(pool, {
    name,
    webhook: {
      url: demoReceiverUrl(port),
      serve: async (endpoint) => {
        await serve?.();
        served.push(endpoint.endpointId);
      },
    },
  });
}

async function endpointsOf(issuerId: string) {
  const { rows } = await pool.query<{ id: string; url: string; events: string[]; mode: string; disabled: boolean }>(
    'SELECT id, url, events, mode, disabled_at IS NOT NULL AS disabled FROM webhook_endpoints WHERE issuer_id = $1 ORDER BY created_at',
    [issuerId],
  );
  return rows;
}

describe("npm start's demo issuer and webhook endpoint", () => {
  it('two launchers on one database make one demo issuer, one key and one demo endpoint, both serving its receiver', async () => {
    const name = `Demo Issuer ${randomUUID()}`;
    const served: string[] = [];
    const runs = await Promise.all([demoRun(name, 4100, served), demoRun(name, 4100, served)]);
    expect(runs[0].issuerId).toBe(runs[1].issuerId);
    expect(runs.filter((run) => run.key !== undefined)).toHaveLength(1);
    expect(runs.map((run) => run.webhook!.state).sort()).toEqual(['created', 'kept']);
    const endpoints = await endpointsOf(runs[0].issuerId);
    expect(endpoints).toEqual([
      {
        id: runs[0].webhook!.endpointId,
        url: 'http://127.0.0.1:4100/demo-webhooks',
        events: ['status.updated', 'delivery.predicted', 'delivery.completed', 'delivery.exception', 'webhook_endpoint.disabled'],
        mode: 'live',
        disabled: false,
      },
    ]);
    expect(runs[1].webhook!.endpointId).toBe(runs[0].webhook!.endpointId);
    expect(served).toEqual([endpoints[0].id, endpoints[0].id]);
  });

  it('a later run keeps the endpoint on the same URL, and moves it when DEMO_WEBHOOK_PORT changed', async () => {
    const name = `Demo Issuer ${randomUUID()}`;
    const first = await demoRun(name, 4100);
    const again = await demoRun(name, 4100);
    expect(again).toEqual({ issuerId: first.issuerId, webhook: { endpointId: first.webhook!.endpointId, state: 'kept', paused: false } });
    const moved = await demoRun(name, 4200);
    expect(moved.webhook).toEqual({ endpointId: first.webhook!.endpointId, state: 'moved', paused: false });
    expect((await endpointsOf(first.issuerId)).map((e) => e.url)).toEqual(['http://127.0.0.1:4200/demo-webhooks']);
  });

  it('does not make the endpoint again once the user removed it, nor serve its receiver', async () => {
    const name = `Demo Issuer ${randomUUID()}`;
    const first = await demoRun(name, 4100);
    await removeWebhookEndpoint(pool, first.webhook!.endpointId);
    const served: string[] = [];
    const later = await demoRun(name, 4100, served);
    expect(later.webhook).toEqual({ endpointId: first.webhook!.endpointId, state: 'removed', paused: false });
    expect(served).toEqual([]);
    expect((await endpointsOf(first.issuerId)).map((e) => e.disabled)).toEqual([true]);
  });

  it('leaves an endpoint the user pointed at another URL where it is, and does not serve a receiver for it', async () => {
    const name = `Demo Issuer ${randomUUID()}`;
    const first = await demoRun(name, 4100);
    await pool.query('UPDATE webhook_endpoints SET url = $2 WHERE id = $1', [first.webhook!.endpointId, 'https://hooks.example.com/cards']);
    const served: string[] = [];
    const later = await demoRun(name, 4100, served);
    expect(later.webhook!.state).toBe('elsewhere');
    expect(served).toEqual([]);
    expect((await endpointsOf(first.issuerId)).map((e) => e.url)).toEqual(['https://hooks.example.com/cards']);
  });

  it('makes nothing when its receiver cannot be served (its port taken), so the next run still prints the key', async () => {
    const name = `Demo Issuer ${randomUUID()}`;
    await expect(demoRun(name, 4100, [], () => Promise.reject(new Error('DEMO_WEBHOOK_PORT=4100: in use')))).rejects.toThrow('in use');
    const { rows } = await pool.query('SELECT 1 FROM issuers WHERE name = $1', [name]);
    expect(rows).toHaveLength(0);
    const next = await demoRun(name, 4100);
    expect(next.key).toMatch(/^cds_live_/);
    expect(next.webhook!.state).toBe('created');
  });
});

function record(id = randomUUID()): StatusRecord {
  return {
    id,
    status: 'in_transit',
    dispatch_date: '2026-11-18T08:00:00.000Z',
    destination: { postal_code: '75011', country_code: 'FR' },
    prediction: { delivery_window: { min: '2026-11-20', max: '2026-11-21' }, confidence_level: 'High' },
    ui_suggestion: { locale: 'fr-FR', recommended_message: 'Votre carte est en route.', recommended_action: 'None' },
  };
}

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

describe('the demo receiver and delivery to it', () => {
  let demo: Demo;
  let receiver: DemoReceiver;
  let port: number;
  const lines: string[] = [];

  beforeAll(async () => {
    port = await freePort();
    demo = await ensureDemoIssuer(pool, {
      name: `Demo Issuer ${randomUUID()}`,
      webhook: {
        url: demoReceiverUrl(port),
        serve: async (endpoint) => {
          receiver = await startDemoReceiver({ port, pool, endpoint, write: (line) => lines.push(line) });
          receivers.push(receiver);
        },
      },
    });
  });

  /** The delivery activities as `npm start`'s worker has them: private networks refused, the demo origin for the demo endpoint. */
  const activities = () =>
    createWebhookDeliveryActivities({
      pool,
      config: loadConfig({ WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_SCHEDULE: '1m,5m,30m,2h,8h' }),
      loopbackOriginFor: (endpointId) => (endpointId === demo.webhook?.endpointId ? receiver.origin : undefined),
    });
  const deliver = (pair: { eventId: string; endpointId: string }) =>
    new MockActivityEnvironment({ attempt: 1 }, { logger: quiet })
      .run(activities().deliverWebhook, pair)
      .catch((failure: unknown) => failure as Error);
  const attemptError = async (pair: { eventId: string; endpointId: string }) =>
    (
      await pool.query<{ error: string | null }>('SELECT error FROM delivery_attempts WHERE event_id = $1 AND endpoint_id = $2', [
        pair.eventId,
        pair.endpointId,
      ])
    ).rows.map((r) => r.error);

  it('is delivered the demo endpoint\'s webhooks although private networks are refused, and logs one line of ids with "signature ok"', async () => {
    const data = record();
    const [pair] = await createWebhookEvents(pool, {
      dispatchId: data.id,
      issuerId: demo.issuerId,
      mode: 'live',
      events: [{ type: 'status.updated', timestamp: '2026-11-20T10:00:00.000Z', data }],
    });
    expect(pair.endpointId).toBe(demo.webhook!.endpointId);
    expect(await deliver(pair)).toEqual({ outcome: 'delivered', attempts: 1 });
    expect(lines).toEqual([`demo webhook  status.updated  event ${pair.eventId}  dispatch ${data.id}  attempt 1  signature ok`]);
  });

  it('refuses, in those same activities, another loopback URL and another endpoint with the very URL of the demo receiver', async () => {
    const other = await createWebhookEndpoint(pool, { issuerId: demo.issuerId, url: `http://127.0.0.1:${port + 1}/demo-webhooks`, events: ['delivery.completed'] }); // prettier-ignore
    const twin = await createWebhookEndpoint(pool, { issuerId: demo.issuerId, url: receiver.url, events: ['delivery.completed'] });
    if (!other.ok || !twin.ok) throw new Error('endpoints not created');
    const data = record();
    const pairs = await createWebhookEvents(pool, {
      dispatchId: data.id,
      issuerId: demo.issuerId,
      mode: 'live',
      events: [{ type: 'delivery.completed', timestamp: '2026-11-20T10:00:00.000Z', data }],
    });
    const before = lines.length;
    for (const endpoint of [other.endpoint, twin.endpoint]) {
      const pair = pairs.find((p) => p.endpointId === endpoint.id)!;
      expect(await deliver(pair)).toMatchObject({ type: 'WebhookAttemptFailed' });
      expect(await attemptError(pair)).toEqual([expect.stringMatching(/^webhook URL refused: 127\.0\.0\.1 is in a loopback range/)]);
    }
    // The demo endpoint (subscribed to every type) got its own, and nothing reached the receiver for the other two.
    const demoPair = pairs.find((p) => p.endpointId === demo.webhook!.endpointId)!;
    expect(await deliver(demoPair)).toEqual({ outcome: 'delivered', attempts: 1 });
    expect(lines.slice(before)).toEqual([expect.stringContaining(`event ${demoPair.eventId}`)]);
  });

  it('answers 401 and logs "signature failed", and nothing of the body, for a webhook signed with another secret', async () => {
    const body = Buffer.from(JSON.stringify({ event: 'status.updated', timestamp: '2026-11-20T10:00:00.000Z', data: record() }));
    const headers = signedHeaders({ eventId: 'evt_forged', attempt: 1, body, secrets: { current: 'whsec_' + Buffer.alloc(32, 7).toString('base64') }, now: new Date() }); // prettier-ignore
    const res = await fetch(receiver.url, { method: 'POST', headers, body });
    expect(res.status).toBe(401);
    expect(lines.at(-1)).toBe('demo webhook  event evt_forged  attempt 1  signature failed (signature_mismatch)');
  });

  it('says which variable to change when its port is held by another process', async () => {
    const holder = net.createServer();
    const held = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as net.AddressInfo).port)),
    );
    try {
      await expect(
        startDemoReceiver({ port: held, pool, endpoint: { issuerId: demo.issuerId, endpointId: demo.webhook!.endpointId } }),
      ).rejects.toThrow(`DEMO_WEBHOOK_PORT ${held} is already in use: stop the other process or set DEMO_WEBHOOK_PORT`);
    } finally {
      holder.close();
    }
  });
});
