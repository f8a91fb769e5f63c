// A dispatch's run writing a change after its erasure was requested, before the erasure's workflow
// ran (docs/privacy.md "Erasure"): the request recorded the erasure and went no further (Temporal
// unreachable, the API process died), so the run is still there when a carrier event signalled
// before the request reaches it, or the hourly prediction refresh asks it for a new prediction.
// That change's write made a new version of the projection, and its webhook events' first attempts
// went out without a claim (db/dispatch-changes.ts hands them over), carrying the card's record to
// the issuer's endpoint after the issuer had asked for it to be erased. The erasure is recorded
// here as the API records it (db/erasure-records.ts requestErasures), without its workflow, and
// started later by DELETE again, as in test/api/erasure-webhook-retry.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dispatchFootprint } from '../../db/erasure.js';
import { requestErasures } from '../../db/erasure-records.js';
import { dedupeKey } from '../../domain/state-machine.js';
import { carrierEventSignal, predictionRefreshSignal, snapshotQuery } from '../../temporal/contract.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let receiver: Receiver;
let key: string;
const call = (method: string, path: string, body?: unknown) => request(h.baseUrl, path, { method, headers: bearer(key), body });

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  key = (await h.createKey(await h.createIssuer('Erasure Pending Change'))).key;
  receiver = await startReceiver();
  const events = ['status.updated', 'delivery.predicted', 'delivery.completed', 'delivery.exception'];
  expect((await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

const versionOf = async (id: string) =>
  (await h.pool.query<{ version: string }>('SELECT version::text FROM dispatches WHERE id = $1', [id])).rows[0]?.version;
const sentFor = (id: string, after: number) =>
  receiver.requests.filter((r) => r.receivedAt >= after && r.body.toString('utf8').includes(id)).length;
const failedTasks = async (id: string) =>
  ((await h.temporal.workflow.getHandle(id).fetchHistory()).events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;

describe.each([
  [
    'a carrier event signalled before the request',
    (id: string) => {
      const event = { status: 'out_for_delivery' as const, occurred_at: new Date().toISOString() };
      return h.temporal.workflow.getHandle(id).signal(carrierEventSignal, { ...event, dedupeKey: dedupeKey(event) });
    },
  ],
  [
    'the prediction refresh',
    async (id: string) => {
      const handle = h.temporal.workflow.getHandle(id);
      const { version } = await handle.query(snapshotQuery);
      return handle.signal(predictionRefreshSignal, { version, statisticsAsOf: new Date().toISOString() });
    },
  ],
])('a change from %s reaching the run of a dispatch whose erasure is recorded, its workflow not run', (_, change) => {
  const id = randomUUID();
  let requestedAt: number;
  let versionAtRequest: string | undefined;

  beforeAll(async () => {
    expect((await call('POST', '/v1/dispatches', registrationFor(id, { tracking_number: 'PENDING-CHANGE-1', reference: 'REF-PENDING-1' }))).status).toBe(201); // prettier-ignore
    expect((await call('POST', `/v1/dispatches/${id}/events`, { status: 'in_transit', occurred_at: new Date().toISOString() })).status).toBe(202); // prettier-ignore
    await until(() => sentFor(id, 0) > 0, 'the in_transit webhook');
    await until(async () => (await h.temporal.workflow.getHandle(id).query(snapshotQuery)).version === 2, 'version 2 in the run');
    await requestErasures(h.pool, [id]);
    requestedAt = Date.now();
    versionAtRequest = await versionOf(id);
    await change(id);
    // Long enough for the change's write and its webhooks' first attempts.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
  }, 60_000);

  it('writes no version of the projection and sends no webhook', async () => {
    expect(await versionOf(id)).toBe(versionAtRequest);
    expect(sentFor(id, requestedAt)).toBe(0);
  });

  it('ends its run as erased, with no failed workflow task', async () => {
    const result = (await h.temporal.workflow.getHandle(id).result()) as { status: string };
    expect(result.status).toBe('erased');
    expect(await failedTasks(id)).toBe(0);
  }, 20_000);

  it('is erased whole once asked again, nothing more sent', async () => {
    const again = await call('DELETE', `/v1/dispatches/${id}`);
    expect(again.status).toBe(202);
    await until(
      async () => (await call('GET', `/v1/erasures/${again.body.id}`)).body.status === 'completed',
      'the erasure completed',
      120_000,
    );
    expect(Object.entries(await dispatchFootprint(h.pool, id)).filter(([, n]) => n !== 0)).toEqual([]);
    expect(await countDispatchRuns(h.temporal, id)).toBe(0);
    expect(sentFor(id, requestedAt)).toBe(0);
  }, 150_000);
});
