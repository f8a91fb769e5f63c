// A carrier event (POST …/events, and a tracking feed's checkpoint) for a dispatch whose workflow is
// open, racing its erasure (docs/privacy.md "Erasure"). The event is recorded before the erasure is
// requested; the erasure then deletes the dispatch's run before the event's signal reaches Temporal,
// so the signal finds no workflow while the dispatch's rows still wait for the erasure's rows step.
// DESIGN §11: carrier events for an erased dispatch answer 404 saying it was erased, and a feed's
// checkpoint for it is `ignored` and not stored. Without a look at the tombstone there, the event
// was answered as for a dispatch whose workflow was terminated (409 "closed", effect
// `workflow_closed`), and the feed kept the checkpoint on its ignored list, naming the dispatch and
// its tracking number. The interleaving is forced, not waited for: the ingest is given the real
// Temporal client, whose signal first has the erasure requested through the API and waits until it
// has deleted the dispatch's run. WEBHOOK_TIMEOUT_MS of 20 s keeps the erasure pending (its wait is
// WEBHOOK_TIMEOUT_MS + 5 s) while the event is answered. Also: DELETE sent several times at once
// records one erasure, and every answer names it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@temporalio/client';
import { dispatchFootprint } from '../../db/erasure.js';
import { createCarrierEventIngest, type IngestOutcome } from '../../ingest/carrier-events.js';
import { createFeedIngest } from '../../ingest/tracking-feeds.js';
import { FEED_PROVIDER_MODULES } from '../../domain/tracking-feeds/index.js';
import { dispatchWorkflowOptions } from '../../temporal/client.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { startHarness, type Harness } from '../support/harness.js';
import { createFeed, easyPostBody } from '../support/tracking-feeds.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let key: string;
let issuerId: string;

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
const call = (method: string, path: string, body?: unknown) => request(h.baseUrl, path, { method, headers: bearer(key), body });

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_TIMEOUT_MS: '20000' } });
  issuerId = await h.createIssuer('Erasure Event Race');
  key = (await h.createKey(issuerId)).key;
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/** The harness's Temporal client, except that the first signal runs `before` first. */
function clientThatBeforeSignal(before: () => Promise<void>): Client {
  let done = false;
  const bind = (target: object, prop: string | symbol) => {
    const value = Reflect.get(target, prop, target) as unknown;
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  };
  const workflow = new Proxy(h.temporal.workflow, {
    get(target, prop) {
      if (prop !== 'getHandle') return bind(target, prop);
      return (...args: Parameters<typeof target.getHandle>) =>
        new Proxy(target.getHandle(...args), {
          get(handle, handleProp) {
            if (handleProp !== 'signal') return bind(handle, handleProp);
            return async (...signalArgs: unknown[]) => {
              if (!done) {
                done = true;
                await before();
              }
              return (handle.signal as (...a: unknown[]) => Promise<void>)(...signalArgs);
            };
          },
        });
    },
  });
  return new Proxy(h.temporal, { get: (target, prop) => (prop === 'workflow' ? workflow : bind(target, prop)) });
}

/** A dispatch registered through the API and moved in transit: its workflow is open. */
async function inTransit(trackingNumber: string): Promise<{ id: string; dispatchDate: string }> {
  const id = randomUUID();
  const dispatchDate = hoursAgo(48);
  const registration = registrationFor(id, { dispatch_date: dispatchDate, tracking_number: trackingNumber, carrier: 'USPS' });
  expect((await call('POST', '/v1/dispatches', registration)).status).toBe(201);
  expect((await call('POST', `/v1/dispatches/${id}/events`, { status: 'in_transit', occurred_at: hoursAgo(40), event_id: 'first' })).status).toBe(202); // prettier-ignore
  await until(async () => (await call('GET', `/v1/status/${id}`)).body?.status === 'in_transit', `${id} in transit`);
  return { id, dispatchDate };
}

/** Requests the erasure through the API and waits until its workflow has deleted the dispatch's run. */
async function eraseRunsOf(id: string): Promise<string> {
  const erasure = await call('DELETE', `/v1/dispatches/${id}`);
  expect(erasure.status).toBe(202);
  await until(async () => (await countDispatchRuns(h.temporal, id)) === 0, `the run of ${id} deleted`, 60_000);
  return erasure.body.id as string;
}

function ingestWith(temporal: Client) {
  return createCarrierEventIngest({ pool: h.pool, temporal, taskQueue: h.taskQueue, workflowOptions: dispatchWorkflowOptions(h.config) });
}

describe('a carrier event whose signal finds the run its erasure deleted', () => {
  let dispatch: { id: string; dispatchDate: string };
  let erasureId: string;
  let outcome: IngestOutcome;

  beforeAll(async () => {
    dispatch = await inTransit('RACE-EVENT-1');
    const ingest = ingestWith(
      clientThatBeforeSignal(async () => {
        erasureId = await eraseRunsOf(dispatch.id);
      }),
    );
    outcome = await ingest.ingest(dispatch, { event: { status: 'out_for_delivery', occurred_at: hoursAgo(1), event_id: 'late-1' } });
  }, 120_000);

  it('is answered as for an erased dispatch (the API’s 404 saying so), not as for a closed one', async () => {
    expect(outcome).toEqual({ outcome: 'erased', message: expect.stringMatching(/was erased on/) });
    // Every answer above was given while the erasure had not completed.
    expect((await call('GET', `/v1/erasures/${erasureId}`)).body.status).toBe('pending');
  });

  it('leaves no carrier event row saying the workflow was closed', async () => {
    const { rows } = await h.pool.query(`SELECT count(*)::int AS n FROM carrier_events WHERE dispatch_id = $1 AND effect = 'workflow_closed'`, [dispatch.id]); // prettier-ignore
    expect(rows[0].n).toBe(0);
  });
});

describe("a tracking feed's checkpoint whose signal finds the run its erasure deleted", () => {
  let dispatch: { id: string; dispatchDate: string };
  let erasureId: string;
  let receipt: Awaited<ReturnType<ReturnType<typeof createFeedIngest>['receive']>>;

  beforeAll(async () => {
    dispatch = await inTransit('RACE-FEED-1');
    const feed = await createFeed(h.baseUrl, key, 'easypost', 'whsec-erasure-race-0123456789');
    const parsed = FEED_PROVIDER_MODULES.easypost.parse(
      JSON.parse(easyPostBody('RACE-FEED-1', [{ status: 'out_for_delivery', datetime: hoursAgo(1) }])),
    );
    if (!parsed.ok) throw new Error('the EasyPost body does not parse');
    const feeds = createFeedIngest({
      pool: h.pool,
      ingest: ingestWith(
        clientThatBeforeSignal(async () => {
          erasureId = await eraseRunsOf(dispatch.id);
        }),
      ),
    });
    receipt = await feeds.receive({ id: feed.id, issuerId, mode: 'live' }, parsed.trackings);
  }, 120_000);

  it('is counted ignored', () => {
    expect(receipt).toMatchObject({ received: 1, applied: 0, ignored: 1 });
  });

  it("is not stored on the feed's ignored list, which would name the dispatch and its tracking number", async () => {
    const { rows } = await h.pool.query(
      `SELECT count(*)::int AS n FROM feed_ignored_checkpoints WHERE dispatch_id = $1 OR tracking_number = 'RACE-FEED-1'`,
      [dispatch.id],
    );
    expect(rows[0].n).toBe(0);
    expect((await call('GET', `/v1/erasures/${erasureId}`)).body.status).toBe('pending');
  });
});

describe('DELETE of one dispatch sent five times at once', () => {
  it('answers every one 202 with the same erasure, which completes with the one workflow run removed', async () => {
    const other = (await h.createKey(await h.createIssuer('Erasure Concurrent Deletes'))).key;
    const id = randomUUID();
    const as = (method: string, path: string, body?: unknown) => request(h.baseUrl, path, { method, headers: bearer(other), body });
    expect((await as('POST', '/v1/dispatches', registrationFor(id))).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 5 }, () => as('DELETE', `/v1/dispatches/${id}`)));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect((await h.pool.query('SELECT count(*)::int AS n FROM erasures WHERE dispatch_id = $1', [id])).rows[0].n).toBe(1);
    const erasureId = answers[0].body.id as string;
    const done = await until(
      async () => {
        const res = await as('GET', `/v1/erasures/${erasureId}`);
        return res.body.status === 'completed' ? res.body : undefined;
      },
      'the erasure completed',
      90_000,
    );
    expect(done.removed.workflow_runs).toBe(1);
    expect(await countDispatchRuns(h.temporal, id)).toBe(0);
  }, 120_000);
});

describe('once both erasures complete', () => {
  it('leaves nothing of either dispatch in any table or in Temporal', async () => {
    const { rows } = await h.pool.query<{ dispatch_id: string }>(`SELECT dispatch_id FROM erasures WHERE issuer_id = $1`, [issuerId]);
    expect(rows).toHaveLength(2);
    for (const { dispatch_id: id } of rows) {
      await until(
        async () => (await h.pool.query(`SELECT status FROM erasures WHERE dispatch_id = $1`, [id])).rows[0].status === 'completed',
        `the erasure of ${id} completed`,
        90_000,
      );
      const footprint = await dispatchFootprint(h.pool, id);
      expect(Object.entries(footprint).filter(([, count]) => count !== 0)).toEqual([]);
      expect(await countDispatchRuns(h.temporal, id)).toBe(0);
    }
  }, 200_000);
});
