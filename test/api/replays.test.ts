// Replays as an API (docs/webhooks.md "Replays over the API"): POST /v1/webhook_endpoints/{id}/replay with a
// time range or a list of event ids answers 202 with a replay id, and the paged redelivery workflow
// sends exactly those deliveries again to a real local receiver; GET /v1/replays/{id} shows its
// progress. Bad bodies are 400 naming the field before the scope's 403; another issuer's replay or
// endpoint is 404; a disabled endpoint is 409. Progress adds each page once; a replay whose workflow
// closed without completing is marked failed by the reconciler.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRedeliveryActivities } from '../../activities/redelivery.js';
import { createReplay } from '../../db/webhook-replays.js';
import { replayDeliveries } from '../../ingest/webhook-replays.js';
import { RECONCILE_DELIVERIES_WORKFLOW_TYPE } from '../../temporal/contract.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request, type TestResponse } from './http.js';

let h: Harness;
let receiver: Receiver;
let key: string;
let readOnlyKey: string;
let otherKey: string;
let endpointId: string;
let since: string;
let until_: string;
/** The dispatches' event ids, oldest first. */
let eventIds: string[];

const call = (method: string, path: string, body?: unknown, withKey = key): Promise<TestResponse> =>
  request(h.baseUrl, path, { method, headers: bearer(withKey), body });
const received = (eventId: string) => receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId).length;

async function finished(replayId: string): Promise<Record<string, any>> {
  return until(async () => {
    const response = await call('GET', `/v1/replays/${replayId}`);
    return response.body.status === 'running' ? undefined : response.body;
  }, `replay ${replayId} to finish`);
}

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  const issuer = await h.createIssuer('Replays API Issuer');
  key = (await h.createKey(issuer, { mode: 'test' })).key;
  readOnlyKey = (await h.createKey(issuer, { mode: 'test', scopes: ['webhooks:read'] })).key;
  otherKey = (await h.createKey(await h.createIssuer('Other Replays Issuer'), { mode: 'test' })).key;
  endpointId = (await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'] })).body.id;

  since = new Date().toISOString();
  for (let i = 0; i < 3; i += 1) {
    const id = randomUUID();
    expect((await call('POST', '/v1/dispatches', registrationFor(id))).status).toBe(201);
    expect((await call('POST', `/v1/test_helpers/dispatches/${id}/ship`)).status).toBe(200);
  }
  eventIds = await until(async () => {
    const events = (await call('GET', '/v1/events?type=status.updated')).body.data as Array<{ id: string }>;
    return events.length === 3 && events.every((e) => received(e.id) === 1) ? events.map((e) => e.id).reverse() : undefined;
  }, 'three delivered status.updated events');
  until_ = new Date(Date.now() + 1000).toISOString();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('POST /v1/webhook_endpoints/{id}/replay', () => {
  it('replays a time range: 202 with the replay, and every delivery of the range arrives again', async () => {
    const response = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, { since, until: until_ });
    expect(response.status).toBe(202);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^replay-/),
      endpoint_id: endpointId,
      status: expect.stringMatching(/^(running|completed)$/),
      total: 3,
      sent: expect.any(Number),
      failed: 0,
      created_at: expect.any(String),
      completed_at: response.body.status === 'completed' ? expect.any(String) : null,
    });
    expect(response.headers.location).toBe(`/v1/replays/${response.body.id}`);
    expect(await finished(response.body.id)).toMatchObject({ status: 'completed', total: 3, sent: 3, failed: 0, completed_at: expect.any(String) }); // prettier-ignore
    for (const id of eventIds) expect(received(id)).toBe(2);
  });

  it('replays a list of event ids: only those arrive again', async () => {
    const before = eventIds.map(received);
    const response = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, { event_ids: [eventIds[1], eventIds[1]] });
    expect(response.status).toBe(202);
    expect(response.body.total).toBe(1);
    await finished(response.body.id);
    expect(eventIds.map(received)).toEqual([before[0], before[1] + 1, before[2]]);
  });

  it('answers a completed replay with total 0 when nothing matches', async () => {
    const response = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, { event_ids: ['evt_0000000000000000'] });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'completed', total: 0, sent: 0 });
  });

  it("ignores an expired event never delivered to this endpoint (another issuer's, or the issuer's own to another endpoint): 202 with total 0, not 409", async () => {
    /** A fresh dispatch of `withKey`'s issuer taken to `action`; the id of its event of `type` once `endpoint` received it. */
    const deliveredEvent = async (withKey: string, action: string, type: string) => {
      const id = randomUUID();
      expect((await call('POST', '/v1/dispatches', registrationFor(id), withKey)).status).toBe(201);
      expect((await call('POST', `/v1/test_helpers/dispatches/${id}/${action}`, undefined, withKey)).status).toBe(200);
      return until(async () => {
        const [event] = (await call('GET', `/v1/events?type=${type}&dispatch_id=${id}`, undefined, withKey)).body.data as Array<{
          id: string;
        }>;
        return event && received(event.id) === 1 ? event.id : undefined;
      }, `a delivered ${type} event of ${id}`);
    };
    expect((await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'] }, otherKey)).status).toBe(201);
    const othersEvent = await deliveredEvent(otherKey, 'ship', 'status.updated');
    // The issuer's own, to another of its endpoints only (this one does not take delivery.completed).
    expect((await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['delivery.completed'] })).status).toBe(201);
    const ownElsewhere = await deliveredEvent(key, 'deliver', 'delivery.completed');
    // Expired as the retention sweep leaves them (db/retention.ts).
    await h.pool.query(`UPDATE webhook_events SET body = '\\x'::bytea, payload_expired_at = now() WHERE id = ANY ($1::text[])`, [[othersEvent, ownElsewhere]]); // prettier-ignore

    for (const ids of [[othersEvent], [ownElsewhere], [othersEvent, ownElsewhere]]) {
      const response = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, { event_ids: ids });
      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({ status: 'completed', total: 0, sent: 0 });
    }
    // Beside one of this endpoint's events, only that one is replayed.
    const response = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, { event_ids: [othersEvent, eventIds[0]] });
    expect(response.status).toBe(202);
    expect(response.body.total).toBe(1);
    await finished(response.body.id);
  });

  it.each([
    [{ since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }, /^until: must be later than since/],
    [{ since: '2026-01-01T00:00:00Z' }, /^until: /],
    [{ event_ids: [] }, /^event_ids: /],
    [{ event_ids: ['nope'] }, /^event_ids\.0: /],
    [{ event_ids: ['evt_0000000000000000'], since: '2026-01-01T00:00:00Z' }, /since/],
    // Years Postgres cannot read once in UTC: each was a 500.
    [{ since: '0000-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }, /^since: must lie within the years 0001 to 9999/],
    [{ since: '0001-01-01T00:00:00+23:59', until: '2026-01-01T00:00:00Z' }, /^since: must lie within the years 0001 to 9999/],
    [{ since: '2026-01-01T00:00:00Z', until: '9999-12-31T23:59:59-23:59' }, /^until: must lie within the years 0001 to 9999/],
  ])('returns 400 naming the field for %j, before the scope', async (body, message) => {
    const response = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, body, readOnlyKey);
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(message);
  });

  it("returns 403 without webhooks:write, 404 for another issuer's endpoint", async () => {
    const body = { event_ids: [eventIds[0]] };
    expect((await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, body, readOnlyKey)).status).toBe(403);
    expect((await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, body, otherKey)).status).toBe(404);
  });

  it('returns 409 for a disabled endpoint', async () => {
    const paused = (await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'] })).body.id;
    await call('PATCH', `/v1/webhook_endpoints/${paused}`, { disabled: true });
    const response = await call('POST', `/v1/webhook_endpoints/${paused}/replay`, { since, until: until_ });
    expect(response.status).toBe(409);
  });
});

describe('GET /v1/replays/{id}', () => {
  it("is readable with webhooks:read; another issuer's replay is 404; a malformed id 400", async () => {
    const started = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, { event_ids: [eventIds[2]] });
    await finished(started.body.id);
    expect((await call('GET', `/v1/replays/${started.body.id}`, undefined, readOnlyKey)).body).toMatchObject({ id: started.body.id, total: 1 }); // prettier-ignore
    expect((await call('GET', `/v1/replays/${started.body.id}`, undefined, otherKey)).status).toBe(404);
    expect((await call('GET', `/v1/replays/replay-${randomUUID()}`)).status).toBe(404);
    const malformed = await call('GET', '/v1/replays/nope');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/^replay_id: /);
  });
});

describe('replay progress', () => {
  const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

  it('adds each page once, however often its activity runs, so sent never passes total', async () => {
    const id = `replay-${randomUUID()}`;
    await createReplay(h.pool, { id, filter: { endpointId, eventIds: eventIds.slice(0, 2) }, total: 2 });
    const activities = createRedeliveryActivities({ pool: h.pool });
    // Each page is one run of the workflow; a retry of its progress activity (its first try committed, its answer lost) is the same run.
    const page = (runId: string, done: boolean) =>
      new MockActivityEnvironment({ workflowExecution: { workflowId: id, runId } }, { logger: quiet }).run(
        activities.recordReplayProgress,
        {
          replayId: id,
          delivered: 1,
          failed: 0,
          skipped: 0,
          done,
        },
      );
    await page('run-1', false);
    await page('run-1', false);
    expect((await call('GET', `/v1/replays/${id}`)).body).toMatchObject({ status: 'running', total: 2, sent: 1 });
    await page('run-2', true);
    await page('run-2', true);
    expect((await call('GET', `/v1/replays/${id}`)).body).toMatchObject({ status: 'completed', total: 2, sent: 2 });
  });

  it('is failed, not running forever, once its workflow was terminated (or never started), at the reconciler’s next run', async () => {
    // A task queue no worker polls: the replay's workflow starts and drives nothing.
    const deps = { pool: h.pool, temporal: h.temporal, taskQueue: `idle-${randomUUID()}` };
    const terminated = (await replayDeliveries(deps, { endpointId, eventIds: [eventIds[0]] }))!;
    await terminated.handle.terminate('an operator stopped it');
    const running = (await replayDeliveries(deps, { endpointId, eventIds: [eventIds[1]] }))!;
    // A row whose request died before its workflow was started, long ago.
    const unstarted = `replay-${randomUUID()}`;
    await createReplay(h.pool, { id: unstarted, filter: { endpointId, eventIds: [eventIds[2]] }, total: 1 });
    await h.pool.query(`UPDATE webhook_replays SET created_at = now() - interval '8 days' WHERE id = $1`, [unstarted]);
    try {
      await h.temporal.workflow.execute(RECONCILE_DELIVERIES_WORKFLOW_TYPE, {
        workflowId: `reconcile-test-${randomUUID()}`,
        taskQueue: h.taskQueue,
        args: [{ graceMs: 7 * 86_400_000 }],
      });
      const status = async (id: string) => (await call('GET', `/v1/replays/${id}`)).body;
      expect(await status(terminated.id)).toMatchObject({ status: 'failed', completed_at: expect.any(String) });
      expect(await status(unstarted)).toMatchObject({ status: 'failed', completed_at: expect.any(String) });
      expect(await status(running.id)).toMatchObject({ status: 'running', completed_at: null });
    } finally {
      await running.handle.terminate('test over');
    }
  });
});
