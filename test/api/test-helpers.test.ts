// Test mode (docs/http-contract.md "Test mode"): POST /v1/test_helpers/dispatches/{id}/{action} moves a
// test-mode dispatch on as a carrier event would and answers with the updated record; webhooks fire
// to the issuer's test endpoints (a real local receiver) and never to its live ones; live keys,
// other issuers and the other mode are refused.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { statusRecord } from '../../domain/dispatch-schemas.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let testKey: string;
let liveKey: string;
let otherIssuerTestKey: string;
let testReceiver: Receiver;
let liveReceiver: Receiver;

const helper = (id: string, action: string, withKey = testKey, body?: unknown) =>
  request(h.baseUrl, `/v1/test_helpers/dispatches/${id}/${action}`, { method: 'POST', headers: bearer(withKey), body });

async function registered(withKey = testKey): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(withKey), body: registrationFor(id) });
  expect(res.status).toBe(201);
  return id;
}

async function exceptionReason(id: string): Promise<string | null> {
  const { rows } = await h.pool.query('SELECT exception_reason FROM dispatches WHERE id = $1', [id]);
  return rows[0].exception_reason;
}

/** The webhook events a receiver got for one dispatch, as `event` names in arrival order. */
const eventsFor = (receiver: Receiver, id: string) =>
  receiver.requests.map((r) => JSON.parse(r.body.toString('utf8'))).filter((envelope) => envelope.data.id === id);

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const issuer = await h.createIssuer('Test Mode Issuer');
  testKey = (await h.createKey(issuer, { mode: 'test' })).key;
  liveKey = (await h.createKey(issuer)).key;
  otherIssuerTestKey = (await h.createKey(await h.createIssuer('Other Issuer'), { mode: 'test' })).key;
  testReceiver = await startReceiver();
  liveReceiver = await startReceiver();
  for (const [receiver, mode] of [
    [testReceiver, 'test'],
    [liveReceiver, 'live'],
  ] as const) {
    const created = await createWebhookEndpoint(h.pool, { issuerId: issuer, url: receiver.url, events: ['status.updated'], mode });
    if (!created.ok) throw new Error(created.reason);
  }
}, 60_000);

afterAll(async () => {
  await testReceiver?.close();
  await liveReceiver?.close();
  await h?.stop();
});

describe('test helper actions', () => {
  it('ship moves the dispatch to in_transit and answers with the updated record', async () => {
    const id = await registered();
    const res = await helper(id, 'ship');
    expect(res.status).toBe(200);
    expect(statusRecord.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({ id, status: 'in_transit' });
    expect((await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(testKey) })).body).toEqual(res.body);
  });

  it('out_for_delivery moves the dispatch to out_for_delivery', async () => {
    const id = await registered();
    expect((await helper(id, 'out_for_delivery')).body.status).toBe('out_for_delivery');
  });

  it('deliver moves the dispatch to delivered and asks for activation', async () => {
    const id = await registered();
    const res = await helper(id, 'deliver');
    expect(res.body.status).toBe('delivered');
    expect(res.body.ui_suggestion.recommended_action).toBe('Activate');
  });

  it('fail moves the dispatch to exception with reason failed_attempt by default', async () => {
    const id = await registered();
    const res = await helper(id, 'fail');
    expect(res.body.status).toBe('exception');
    expect(res.body.ui_suggestion.recommended_action).toBe('ContactSupport');
    expect(await exceptionReason(id)).toBe('failed_attempt');
  });

  it('fail takes the reason from the body', async () => {
    const id = await registered();
    expect((await helper(id, 'fail', testKey, { reason: 'postal_delay' })).body.status).toBe('exception');
    expect(await exceptionReason(id)).toBe('postal_delay');
  });

  it('return moves the dispatch to exception with reason returned', async () => {
    const id = await registered();
    expect((await helper(id, 'return')).body.status).toBe('exception');
    expect(await exceptionReason(id)).toBe('returned');
  });

  it('walks a dispatch through every state, each step after the last', async () => {
    const id = await registered();
    const steps = [];
    for (const action of ['ship', 'fail', 'ship', 'out_for_delivery', 'deliver']) steps.push((await helper(id, action)).body.status);
    expect(steps).toEqual(['in_transit', 'exception', 'in_transit', 'out_for_delivery', 'delivered']);
  });

  it('records each action as a carrier event of its own', async () => {
    const id = await registered();
    await helper(id, 'ship');
    await helper(id, 'fail');
    const { rows } = await h.pool.query('SELECT status, effect FROM carrier_events WHERE dispatch_id = $1 ORDER BY received_at', [id]);
    expect(rows).toEqual([
      { status: 'in_transit', effect: 'applied' },
      { status: 'exception', effect: 'applied' },
    ]);
  });

  it('returns 409 conflict for an action the state machine would ignore', async () => {
    const id = await registered();
    await helper(id, 'deliver');
    const res = await helper(id, 'ship');
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('conflict');
  });
});

describe('test helper webhooks', () => {
  it("fire to the issuer's test endpoint and not to its live endpoint", async () => {
    const id = await registered();
    await helper(id, 'ship');
    await until(() => eventsFor(testReceiver, id).length > 0, 'the test endpoint to receive status.updated');
    expect(eventsFor(testReceiver, id)[0]).toMatchObject({ event: 'status.updated', data: { id, status: 'in_transit' } });
    // The live endpoint subscribes to the same event; give a wrong delivery time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(eventsFor(liveReceiver, id)).toEqual([]);
  });

  it("of a live dispatch's carrier event go to the live endpoint only", async () => {
    const id = await registered(liveKey);
    const event = { status: 'in_transit', occurred_at: new Date().toISOString() };
    expect((await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(liveKey), body: event })).status).toBe(202);
    await until(() => eventsFor(liveReceiver, id).length > 0, 'the live endpoint to receive status.updated');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(eventsFor(testReceiver, id)).toEqual([]);
  });
});

describe('test helper access', () => {
  it('returns 403 forbidden to a live key', async () => {
    const id = await registered(liveKey);
    const res = await helper(id, 'ship', liveKey);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it("returns 403 forbidden for another issuer's test dispatch, as every dispatch route does", async () => {
    const id = await registered();
    const res = await helper(id, 'ship', otherIssuerTestKey);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it('returns 404 for a live dispatch of the same issuer', async () => {
    const id = await registered(liveKey);
    expect((await helper(id, 'ship')).status).toBe(404);
  });

  it('returns 404 for an unknown dispatch', async () => {
    expect((await helper(randomUUID(), 'ship')).status).toBe(404);
  });

  it('returns 404 saying it was erased for a test dispatch whose erasure was requested, as carrier events do', async () => {
    const id = await registered();
    expect((await request(h.baseUrl, `/v1/dispatches/${id}`, { method: 'DELETE', headers: bearer(testKey) })).status).toBe(202);
    const res = await helper(id, 'ship');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.stringMatching(new RegExp(`dispatch ${id} was erased on \\d{4}-`)) });
    expect((await helper(id, 'ship', otherIssuerTestKey)).status).toBe(403);
  });

  it('returns 400 naming action for an unknown action', async () => {
    const res = await helper(await registered(), 'teleport');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^action: /);
  });

  it('returns 400 naming reason for an unknown fail reason', async () => {
    const res = await helper(await registered(), 'fail', testKey, { reason: 'eaten' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^reason: /);
  });

  it('returns 400 for a body on an action that takes none', async () => {
    const res = await helper(await registered(), 'ship', testKey, { reason: 'lost' });
    expect(res.status).toBe(400);
  });

  it('returns 400 when the id is not a UUID v4', async () => {
    expect((await helper('12345', 'ship')).status).toBe(400);
  });
});

describe('test mode on the other paths', () => {
  it("returns 404 to a live key for a test dispatch's status and events", async () => {
    const id = await registered();
    expect((await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(liveKey) })).status).toBe(404);
    const event = { status: 'in_transit', occurred_at: new Date().toISOString() };
    expect((await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(liveKey), body: event })).status).toBe(404);
  });
});
