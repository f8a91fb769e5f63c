// Clocks that differ by seconds, minutes or a time zone's day (DESIGN §6 "Time bounds", "Registration
// is not a carrier event"; docs/webhooks.md "Signing"): a carrier whose clock runs 1–30 s ahead of
// ours, an issuer's "today" sent from UTC+14 (its day already turned) or UTC−12 (not yet), and a
// webhook consumer whose clock is 4 minutes off verifying a real delivery as the consumer kit and
// docs/webhooks.md tell it to. Each is taken as the instant it names; none is refused or reordered.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { verify, verifyRequest } from '../../consumer-kit/src/index.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let key: string;
let receiver: Receiver;
let secret: string;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const register = (body: unknown) => request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body });
const postEvent = (id: string, body: unknown) => request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body });
const statusOf = async (id: string) => (await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) })).body;
const carrierEventsOf = async (id: string) =>
  (await request(h.baseUrl, `/v1/dispatches/${id}/events?limit=100`, { headers: bearer(key) })).body.data as Array<{
    status: string;
    occurred_at: string;
    effect: string;
  }>;

async function registered(dispatchDate = new Date(Date.now() - 2 * DAY).toISOString()): Promise<string> {
  const id = randomUUID();
  const res = await register(registrationFor(id, { dispatch_date: dispatchDate }));
  expect(res.status).toBe(201);
  return id;
}

/** `instant` as the wall clock of a zone `offsetHours` from UTC reads it, with that offset: RFC 3339. */
function inZone(instant: number, offsetHours: number): string {
  const wallClock = new Date(instant + offsetHours * HOUR).toISOString().slice(0, 19);
  const sign = offsetHours < 0 ? '-' : '+';
  return `${wallClock}${sign}${String(Math.abs(offsetHours)).padStart(2, '0')}:00`;
}

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  key = (await h.createKey(await h.createIssuer('Clock Skew Issuer'))).key;
  receiver = await startReceiver();
  const endpoint = await request(h.baseUrl, '/v1/webhook_endpoints', {
    headers: bearer(key),
    body: { url: receiver.url, events: ['status.updated'] },
  });
  expect(endpoint.status).toBe(201);
  secret = endpoint.body.secret;
});

afterAll(async () => {
  await h?.stop();
  await receiver?.close();
});

describe("a carrier whose clock is ahead of the service's", () => {
  it.each([1, 30])('applies a carrier event whose occurred_at is %i s in the future', async (seconds) => {
    const id = await registered();
    const occurredAt = new Date(Date.now() + seconds * 1000).toISOString();
    const res = await postEvent(id, { status: 'in_transit', occurred_at: occurredAt, event_id: `ahead-${seconds}` });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true, duplicate: false });
    await until(async () => (await statusOf(id)).status === 'in_transit', 'in_transit');
    expect(await carrierEventsOf(id)).toEqual([
      expect.objectContaining({ status: 'in_transit', occurred_at: occurredAt, effect: 'applied' }),
    ]);
  });

  it('delivers a card whose delivered scan is 30 s in the future, on the day the scan names', async () => {
    const id = await registered();
    const occurredAt = new Date(Date.now() + 30_000).toISOString();
    expect((await postEvent(id, { status: 'delivered', occurred_at: occurredAt })).status).toBe(202);
    const record = await until(async () => {
      const body = await statusOf(id);
      return body.status === 'delivered' ? body : undefined;
    }, 'delivered');
    expect(record.prediction.delivery_window).toEqual({ min: occurredAt.slice(0, 10), max: occurredAt.slice(0, 10) });
    expect(record.ui_suggestion.recommended_action).toBe('Activate');
  });

  it('moves a card on by a later scan from a carrier whose clock is right, after one from a carrier 30 s ahead', async () => {
    const id = await registered();
    const ahead = new Date(Date.now() + 30_000).toISOString();
    expect((await postEvent(id, { status: 'in_transit', occurred_at: ahead })).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const right = new Date().toISOString();
    expect((await postEvent(id, { status: 'out_for_delivery', occurred_at: right })).status).toBe(202);
    // The out_for_delivery scan is earlier than the in_transit one by the clocks' readings, but a
    // forward status is never a step back: the card is out for delivery whatever the order.
    await until(async () => (await statusOf(id)).status === 'out_for_delivery', 'out_for_delivery');
  });
});

describe('an issuer\'s "today" sent from the ends of the time zones', () => {
  // UTC+14 (Kiribati): its day has turned before UTC's; UTC−12: its day turns after UTC's.
  it.each([
    ['UTC+14, at the start of its local day', 14, 'start'],
    ['UTC+14, at its current wall-clock time', 14, 'now'],
    ['UTC−12, at the start of its local day', -12, 'start'],
    ['UTC−12, at its current wall-clock time', -12, 'now'],
  ])('registers a dispatch_date of "today" from %s, as the instant it names', async (_, offset, when) => {
    const now = Date.now();
    const localToday = new Date(now + offset * HOUR).toISOString().slice(0, 10);
    const dispatchDate = when === 'start' ? `${localToday}T00:00:00${offset < 0 ? '-' : '+'}${String(Math.abs(offset)).padStart(2, '0')}:00` : inZone(now, offset); // prettier-ignore
    const id = randomUUID();
    const res = await register(registrationFor(id, { dispatch_date: dispatchDate }));
    expect(res.status).toBe(201);
    const instant = new Date(dispatchDate).toISOString();
    expect(res.body.dispatch_date).toBe(instant);
    // The window lies after the day the card left, by UTC's calendar as the record shows it.
    expect(res.body.prediction.delivery_window.min >= instant.slice(0, 10)).toBe(true);
  });

  it.each([
    ['UTC+14', 14],
    ['UTC−12', -12],
  ])(
    'registers the wall-clock time of %s sent with "Z" (the offset forgotten): within a day of now, so taken as written',
    async (_, offset) => {
      const wallClockAsUtc = `${new Date(Date.now() + offset * HOUR).toISOString().slice(0, 19)}Z`;
      const res = await register(registrationFor(randomUUID(), { dispatch_date: wallClockAsUtc }));
      expect(res.status).toBe(201);
      expect(res.body.dispatch_date).toBe(new Date(wallClockAsUtc).toISOString());
    },
  );

  it('refuses the end of tomorrow in UTC−12 (more than a day ahead), naming dispatch_date and the bounds', async () => {
    const localTomorrow = new Date(Date.now() - 12 * HOUR + DAY).toISOString().slice(0, 10);
    const res = await register(registrationFor(randomUUID(), { dispatch_date: `${localTomorrow}T23:59:59-12:00` }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^dispatch_date: must lie within \[now − 90 days, now \+ 1 day\]/) }); // prettier-ignore
  });

  it('takes a carrier event from UTC+14 a few hours before a dispatch_date sent from UTC−12 (clocks differ; issuers register late)', async () => {
    const id = await registered(inZone(Date.now(), -12));
    const res = await postEvent(id, { status: 'in_transit', occurred_at: inZone(Date.now() - 3 * HOUR, 14) });
    expect(res.status).toBe(202);
    await until(async () => (await statusOf(id)).status === 'in_transit', 'in_transit');
  });
});

describe('a webhook consumer whose clock is 4 minutes off', () => {
  let delivery: Receiver['requests'][number];

  beforeAll(async () => {
    const id = await registered();
    expect((await postEvent(id, { status: 'in_transit', occurred_at: new Date().toISOString() })).status).toBe(202);
    delivery = await until(
      () => receiver.requests.find((r) => JSON.parse(r.body.toString('utf8')).data.id === id),
      'the status.updated webhook',
    );
  });

  it.each([
    ['4 minutes ahead', 4],
    ['4 minutes behind', -4],
  ])("verifies a real delivery with the kit's documented defaults on a clock %s (Standard Webhooks tolerance: 5 minutes)", (_, minutes) => {
    const now = new Date(delivery.receivedAt + minutes * 60_000);
    expect(verifyRequest(delivery.body, delivery.headers, secret, { now })).toEqual({ ok: true });
  });

  it("verifies the spec's X-Service-Signature whatever the consumer's clock: it signs the body alone", () => {
    expect(verify(delivery.body, String(delivery.headers['x-service-signature']), secret)).toBe(true);
  });

  it('rejects the same delivery on a clock 6 minutes off, saying the timestamp is out of tolerance (a replay, or a clock to fix)', () => {
    const now = new Date(delivery.receivedAt + 6 * 60_000);
    expect(verifyRequest(delivery.body, delivery.headers, secret, { now })).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });
});
