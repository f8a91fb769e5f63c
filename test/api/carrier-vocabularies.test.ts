// Carrier vocabularies through the API (docs/carrier-events.md "Carrier vocabularies"):
// POST /v1/dispatches/{id}/events with `vocabulary` "easypost" or "stripe_issuing" moves the dispatch
// as the table in domain/carrier-vocabularies.ts says, keeps the status as sent, and refuses a
// status that says nothing about the card with 400 naming `status` (nothing recorded).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let key: string;

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();

const postEvent = (id: string, body: unknown) => request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body });
const listEvents = async (id: string) => (await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key) })).body.data;

async function registered(): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: registrationFor(id, { dispatch_date: daysAgo(20) }),
  });
  expect(res.status).toBe(201);
  return id;
}

/** The status record once it shows `status`. */
const statusOnce = (id: string, status: string) =>
  until(async () => {
    const res = await request(h.baseUrl, `/v1/status/${id}?locale=en`, { headers: bearer(key) });
    return res.body?.status === status ? res.body : undefined;
  }, `dispatch ${id} ${status}`);

beforeAll(async () => {
  h = await startHarness();
  key = (await h.createKey(await h.createIssuer('Vocabulary Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('POST /v1/dispatches/{id}/events with a carrier vocabulary', () => {
  it('turns an EasyPost return_to_sender into an exception with reason returned, keeping the status as sent', async () => {
    const id = await registered();
    const res = await postEvent(id, { vocabulary: 'easypost', status: 'return_to_sender', occurred_at: daysAgo(18), event_id: 'ep-1' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true, duplicate: false });

    const record = await statusOnce(id, 'exception');
    expect(record.ui_suggestion.recommended_message).toMatch(/returned to the sender/);
    expect(record.ui_suggestion.recommended_action).toBe('ContactSupport');
    expect(await listEvents(id)).toEqual([
      expect.objectContaining({
        status: 'exception',
        reason: 'returned',
        original: { vocabulary: 'easypost', status: 'return_to_sender' },
      }),
    ]);
  });

  it('moves a dispatch in transit on a Stripe Issuing shipped, then delivered on delivered', async () => {
    const id = await registered();
    expect((await postEvent(id, { vocabulary: 'stripe_issuing', status: 'shipped', occurred_at: daysAgo(19) })).status).toBe(202);
    await statusOnce(id, 'in_transit');
    expect((await postEvent(id, { vocabulary: 'stripe_issuing', status: 'delivered', occurred_at: daysAgo(17) })).status).toBe(202);
    await statusOnce(id, 'delivered');
  });

  it('takes the reason of the body over the mapped one', async () => {
    const id = await registered();
    expect((await postEvent(id, { vocabulary: 'easypost', status: 'failure', reason: 'damaged', occurred_at: daysAgo(18) })).status).toBe(
      202,
    );
    await statusOnce(id, 'exception');
    expect((await listEvents(id))[0]).toMatchObject({
      status: 'exception',
      reason: 'damaged',
      original: { vocabulary: 'easypost', status: 'failure' },
    });
  });

  it('keeps the service vocabulary as the default, and when named', async () => {
    const id = await registered();
    expect((await postEvent(id, { vocabulary: 'service', status: 'in_transit', occurred_at: daysAgo(19) })).status).toBe(202);
    await statusOnce(id, 'in_transit');
    expect((await listEvents(id))[0]).toMatchObject({ status: 'in_transit', original: null });
  });

  it.each(['unknown', 'error'])('refuses EasyPost %s with 400 naming status, and records nothing', async (status) => {
    const id = await registered();
    const res = await postEvent(id, { vocabulary: 'easypost', status, occurred_at: daysAgo(18) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^status: /) });
    expect(await listEvents(id)).toEqual([]);
  });

  it('answers 400 naming reason for a reason with a carrier status that is not an exception', async () => {
    const res = await postEvent(await registered(), {
      vocabulary: 'easypost',
      status: 'in_transit',
      reason: 'lost',
      occurred_at: daysAgo(18),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^reason: .*exception/) });
  });

  it('answers 400 naming status for a status of another vocabulary than the one named', async () => {
    const id = await registered();
    const res = await postEvent(id, { vocabulary: 'stripe_issuing', status: 'return_to_sender', occurred_at: daysAgo(18) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^status: must be one of pending, shipped/);
  });

  it('answers 400 naming vocabulary for a vocabulary the service does not know', async () => {
    const id = await registered();
    const res = await postEvent(id, { vocabulary: 'ups', status: 'in_transit', occurred_at: daysAgo(18) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^vocabulary: /);
  });
});
