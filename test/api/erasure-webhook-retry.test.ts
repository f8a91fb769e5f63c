// A dispatch whose webhook delivery waits on a durable timer for its next retry when its erasure is
// requested (docs/privacy.md "Erasure"). From the request on the dispatch is a tombstone for every
// route; its erasure's workflow removes its runs (and with them the timer) within seconds, unless
// it did not start: the request recorded the erasure and went no further (Temporal unreachable, the
// API process died), and the retention sweep, or the client asking again, starts it up to a day
// later. Meanwhile the dispatch's run went on retrying, and every retry sent its status record (the
// card's tracking number, reference, postal code) to the issuer's endpoint after the issuer had
// asked for it to be erased. The erasure is recorded here as the API records it (db/erasure-records.ts
// requestErasures), without its workflow, and started later by DELETE again.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dispatchFootprint } from '../../db/erasure.js';
import { requestErasures } from '../../db/erasure-records.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let receiver: Receiver;
let key: string;
const call = (method: string, path: string, body?: unknown) => request(h.baseUrl, path, { method, headers: bearer(key), body });

/** Retries every 2 s. */
const RETRY_MS = 2_000;

beforeAll(async () => {
  h = await startHarness({
    env: {
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE: '2s,2s,2s,2s,2s',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
  });
  key = (await h.createKey(await h.createIssuer('Erasure Webhook Retry'))).key;
  // The endpoint is down: every attempt fails, so the delivery keeps waiting for its next retry.
  receiver = await startReceiver({ respond: () => 503 });
  expect((await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'] })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('a dispatch whose webhook retry is pending when its erasure is requested', () => {
  const id = randomUUID();
  let requestedAt: number;
  const sentAfterRequest = () =>
    receiver.requests.filter((r) => r.receivedAt > requestedAt + 1_500 && r.body.toString('utf8').includes(id)).length;

  beforeAll(async () => {
    expect((await call('POST', '/v1/dispatches', registrationFor(id, { tracking_number: 'RETRY-ERASE-1', reference: 'REF-RETRY-1' }))).status).toBe(201); // prettier-ignore
    expect((await call('POST', `/v1/dispatches/${id}/events`, { status: 'in_transit', occurred_at: new Date().toISOString() })).status).toBe(202); // prettier-ignore
    // Its status.updated has failed once and waits for its retry.
    await until(() => receiver.requests.some((r) => r.body.toString('utf8').includes(id)), 'the first attempt');
    await requestErasures(h.pool, [id]);
    requestedAt = Date.now();
    // Long enough for two retries of the schedule (the one in flight at the request may still land).
    await new Promise((resolve) => setTimeout(resolve, 3 * RETRY_MS + 1_500));
  }, 60_000);

  it('sends no delivery carrying its record after the request', () => {
    expect(sentAfterRequest()).toBe(0);
  });

  it('is erased whole once asked again: nothing names it in any table or in Temporal, and nothing more was sent', async () => {
    const again = await call('DELETE', `/v1/dispatches/${id}`);
    expect(again.status).toBe(202);
    await until(
      async () => (await call('GET', `/v1/erasures/${again.body.id}`)).body.status === 'completed',
      'the erasure completed',
      120_000,
    );
    expect(Object.entries(await dispatchFootprint(h.pool, id)).filter(([, n]) => n !== 0)).toEqual([]);
    expect(await countDispatchRuns(h.temporal, id)).toBe(0);
    expect(sentAfterRequest()).toBe(0);
    // The delivery log no longer has the event, nor its deliveries.
    expect((await call('GET', `/v1/events?dispatch_id=${id}`)).body.data).toEqual([]);
  }, 150_000);
});
