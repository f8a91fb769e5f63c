// The delivery log in a real browser, with the worker running and a real local receiver: every
// attempt with its result, filters by event type and outcome, paging, the event page with the exact
// body and the X-Service-Signature it was sent with, replay of one event (same id, same body) and of
// a time range (recovering what a disabled endpoint missed). axe-core on each page.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { verify } from '../../consumer-kit/src/index.js';
import { LOG_PAGE_SIZE } from '../../dashboard/routes/delivery-log.js';
import { recordDeliveryAttempt } from '../../db/webhooks.js';
import { createWebhookEvents } from '../support/webhook-events.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { sampleStatusRecord } from '../../domain/sample-event.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { addEndpoint, requestsFor, sendTestEvent, until } from './webhook-helpers.js';
import { expectAccessible, saveScreenshot, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let receiver: Receiver;
let failing = false;
let user: DashboardUser;
let page: Page;
let endpoint: { id: string; secret: string };
let delivered: string;
let undeliverable: string;

beforeAll(async () => {
  // Two quick retries: an event becomes undeliverable after 3 attempts, in about 2 s.
  h = await startBrowserHarness({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '1s,1s' } });
  receiver = await startReceiver({ respond: () => (failing ? 500 : 200), responseBody: 'ok from the receiver' });
  user = await h.createUser({ issuerName: 'Northwind Card Services' });
  page = await h.newPage();
  await signIn(page, user);
  endpoint = await addEndpoint(page, { url: receiver.url, events: ['status.updated', 'delivery.predicted', 'delivery.exception'] });
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

const logPath = () => `/dashboard/webhooks/${endpoint.id}/deliveries`;

/** The cells of the log's rows, each row as its cell texts. */
async function logRows(query = ''): Promise<string[][]> {
  await page.goto(`${logPath()}${query}`);
  const rows = await page.locator('tbody tr').all();
  return Promise.all(rows.map((row) => row.getByRole('cell').allTextContents()));
}

describe('delivery log', () => {
  it('lists each attempt with time, event, attempt number, status, duration and the first bytes of the response', async () => {
    delivered = await sendTestEvent(page, endpoint.id, 'status.updated');
    const rows = await logRows();
    expect(rows).toHaveLength(1);
    const [time, event, attempt, result, duration, response] = rows[0];
    expect(time).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(event).toContain('status.updated');
    expect(event).toContain(delivered);
    expect([attempt, result, response]).toEqual(['1', 'deliveredHTTP 200', 'ok from the receiver']);
    expect(duration).toMatch(/^\d+ ms$/);
    await expectAccessible(page);
  });

  it('is reachable from the nav: "Delivery log" lists the endpoints to choose from', async () => {
    await page.goto('/dashboard/webhooks');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Delivery log' }).click();
    await expectAccessible(page);
    await saveScreenshot(page, 'delivery-endpoints');
    await page.getByRole('link', { name: receiver.url }).click();
    expect(new URL(page.url()).pathname).toBe(logPath());
  });

  it('filters by outcome and event type: a failing receiver makes failed attempts, then an undeliverable one', async () => {
    failing = true;
    undeliverable = await sendTestEvent(page, endpoint.id, 'delivery.exception');
    await until(async () => ((await logRows('?outcome=undeliverable')).length === 1 ? true : undefined), 'the undeliverable attempt');
    failing = false;

    const attemptsOf = (rows: string[][]) =>
      rows.map((cells) => `${cells[1].includes(undeliverable) ? 'exception' : 'updated'}#${cells[2]}`);
    expect(attemptsOf(await logRows('?outcome=undeliverable'))).toEqual(['exception#3']);
    expect(attemptsOf(await logRows('?outcome=failed'))).toEqual(['exception#3', 'exception#2', 'exception#1']);
    expect(attemptsOf(await logRows('?outcome=delivered'))).toEqual(['updated#1']);
    expect(attemptsOf(await logRows('?event=status.updated'))).toEqual(['updated#1']);
    expect(attemptsOf(await logRows('?event=delivery.exception&outcome=delivered'))).toEqual([]);
    await logRows();
    await expectAccessible(page);
    await saveScreenshot(page, 'deliveries');

    await page.goto('/dashboard/webhooks');
    const cells = await page.getByRole('row').filter({ hasText: receiver.url }).getByRole('cell').allTextContents();
    expect(cells[6]).toBe('1 undeliverable to ' + receiver.url);
  });

  it("shows an event's exact body and the X-Service-Signature it was sent with, which verifies with the secret", async () => {
    const [received] = requestsFor(receiver, delivered);
    await page.goto(`${logPath()}/${delivered}`);
    expect(await page.locator('pre.body').textContent()).toBe(received.body.toString('utf8'));
    const headers = await page.locator('section.attempt pre').nth(1).textContent();
    const signature = /x-service-signature: ([0-9a-f]{64})/i.exec(headers ?? '')?.[1];
    expect(signature).toBe(received.headers['x-service-signature']);
    expect(verify(received.body, signature, endpoint.secret)).toBe(true);
    await expectAccessible(page);
    await saveScreenshot(page, 'delivery');
  });

  it('replays one event: the receiver gets it again with the same event id and body', async () => {
    await page.goto(`${logPath()}/${undeliverable}`);
    await page.getByRole('button', { name: 'Replay this event' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Replay started');
    const requests = await until(() => (requestsFor(receiver, undeliverable).length === 4 ? requestsFor(receiver, undeliverable) : undefined), 'the replay'); // prettier-ignore
    expect(requests[3].body.equals(requests[0].body)).toBe(true);
    expect(requests[3].headers['x-service-delivery-attempt']).toBe('1');
    await until(async () => ((await logRows('?outcome=delivered')).length === 2 ? true : undefined), 'the replayed attempt in the log');
  });

  it('replays a time range: events created while the endpoint was disabled are delivered once it is enabled', async () => {
    const key = (await h.createKey(user.issuerId)).key;
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    const dispatchId = randomUUID();
    expect((await request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(dispatchId) })).status).toBe(201); // prettier-ignore
    await page.getByRole('button', { name: 'Enable endpoint' }).click();

    await page.goto(logPath());
    await page.getByRole('button', { name: 'Replay range' }).click();
    expect(await page.getByRole('status').textContent()).toMatch(/^Replay started for \d+ events/);
    const missed = await until(
      () => receiver.requests.find((r) => JSON.parse(r.body.toString()).data.id === dispatchId),
      'the missed delivery.predicted',
    );
    expect(JSON.parse(missed.body.toString()).event).toBe('delivery.predicted');
  });

  it('shows why an attempt failed although its receiver sent 200, in the log and on the event page', async () => {
    const other = await createWebhookEndpoint(h.pool, { issuerId: user.issuerId, url: receiver.url, events: ['status.updated'], mode: 'test' }); // prettier-ignore
    if (!other.ok) throw new Error(other.reason);
    const events = [{ type: 'status.updated' as const, timestamp: new Date().toISOString(), data: sampleStatusRecord('status.updated', new Date()) }]; // prettier-ignore
    const [pair] = await createWebhookEvents(h.pool, { dispatchId: randomUUID(), issuerId: user.issuerId, mode: 'test', events });
    // What the activity records when a receiver sends `200 OK` and closes the connection mid-body.
    const error = "HTTP 200 received, then the receiver closed the connection before the answer's end";
    await recordDeliveryAttempt(h.pool, {
      ...pair,
      attempt: 1,
      startedAt: new Date(),
      durationMs: 7,
      statusCode: 200,
      error,
      state: 'pending',
    });

    await page.goto(`/dashboard/webhooks/${other.endpoint.id}/deliveries`);
    const [, , , result] = await page.locator('tbody tr').first().getByRole('cell').allTextContents();
    expect(result).toBe(`failed${error}`);
    await page.goto(`/dashboard/webhooks/${other.endpoint.id}/deliveries/${pair.eventId}`);
    expect(await page.locator('.attempt dd').first().textContent()).toBe(`${error} in 7 ms`);
  });

  it(`pages through the attempts, ${LOG_PAGE_SIZE} at a time`, async () => {
    const other = await createWebhookEndpoint(h.pool, { issuerId: user.issuerId, url: receiver.url, events: ['status.updated'], mode: 'test' }); // prettier-ignore
    if (!other.ok) throw new Error(other.reason);
    const timestamp = new Date().toISOString();
    const events = Array.from({ length: LOG_PAGE_SIZE + 5 }, () => ({ type: 'status.updated' as const, timestamp, data: sampleStatusRecord('status.updated', new Date()) })); // prettier-ignore
    const pairs = await createWebhookEvents(h.pool, { dispatchId: randomUUID(), issuerId: user.issuerId, mode: 'test', events });
    for (const pair of pairs)
      await recordDeliveryAttempt(h.pool, {
        ...pair,
        attempt: 1,
        startedAt: new Date(),
        durationMs: 3,
        statusCode: 200,
        state: 'delivered',
      });

    await page.goto(`/dashboard/webhooks/${other.endpoint.id}/deliveries`);
    expect(await page.locator('tbody tr').count()).toBe(LOG_PAGE_SIZE);
    await page.getByRole('link', { name: 'Older attempts' }).click();
    expect(await page.locator('tbody tr').count()).toBe(5);
    expect(await page.getByRole('link', { name: 'Older attempts' }).count()).toBe(0);
  });
});
