// A carrier event that restarts a closed dispatch (docs/states.md "Closed dispatches") racing its
// erasure (docs/privacy.md "Erasure"). The event is recorded and finds the closed run before the
// erasure is requested; the erasure then runs to completion (runs deleted, rows deleted, last sweep
// of runs) before the event's signal-with-start reaches Temporal. Without a check after the restart,
// that start left a run holding the card's registration (postal code, tracking number, reference)
// in its input, after the erasure said it removed everything, and the run's first projection write
// left a prediction_log row naming the dispatch. The interleaving is forced, not waited for: the
// ingest is given the real Temporal client, whose answer to the describe that finds the run closed
// waits for an erasure requested through the API to complete.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@temporalio/client';
import { dispatchFootprint } from '../../db/erasure.js';
import { createCarrierEventIngest, type IngestOutcome } from '../../ingest/carrier-events.js';
import { dispatchWorkflowOptions } from '../../temporal/client.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { startHarness, type Harness } from '../support/harness.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let key: string;

/**
 * How long the erasure may take: Temporal holds the deletion of a run closed a moment ago until its
 * close reaches visibility, and on a loaded machine (CI) that took over a minute (as
 * test/api/erasure.test.ts's ERASURE_WAIT_MS allows).
 */
const ERASURE_WAIT_MS = 150_000;
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

beforeAll(async () => {
  // A dispatch resting in exception completes its workflow after EXCEPTION_RETENTION; the erasure
  // waits WEBHOOK_TIMEOUT_MS + 5 s for the activities of the runs it deleted.
  h = await startHarness({ env: { EXCEPTION_RETENTION: '1s', DELIVERED_RETENTION: '1s', WEBHOOK_TIMEOUT_MS: '1000' } });
  key = (await h.createKey(await h.createIssuer('Erasure Race'))).key;
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/**
 * The harness's Temporal client, except that the first describe of a workflow, once answered, runs
 * `after` before returning: the ingest has then found the run closed and has yet to restart it.
 */
function clientThatAfterDescribe(after: () => Promise<void>): Client {
  let done = false;
  const bind = (target: object, prop: string | symbol) => {
    const value = Reflect.get(target, prop, target) as unknown;
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  };
  const workflow = new Proxy(h.temporal.workflow, {
    get(target, prop) {
      if (prop !== 'getHandle') return bind(target, prop);
      return (...args: Parameters<typeof target.getHandle>) => {
        const handle = target.getHandle(...args);
        return new Proxy(handle, {
          get(handleTarget, handleProp) {
            if (handleProp !== 'describe') return bind(handleTarget, handleProp);
            return async () => {
              const description = await handleTarget.describe();
              if (!done) {
                done = true;
                await after();
              }
              return description;
            };
          },
        });
      };
    },
  });
  return new Proxy(h.temporal, { get: (target, prop) => (prop === 'workflow' ? workflow : bind(target, prop)) });
}

describe('a carrier event restarting a closed dispatch while the dispatch is erased', () => {
  const id = randomUUID();
  let outcome: IngestOutcome;

  beforeAll(async () => {
    const dispatchDate = daysAgo(20);
    const registration = registrationFor(id, { dispatch_date: dispatchDate });
    expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registration })).status).toBe(201);
    const exception = { status: 'exception', reason: 'returned', occurred_at: daysAgo(19), event_id: 'returned-1' };
    expect((await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body: exception })).status).toBe(202);
    await until(
      async () => (await h.temporal.workflow.getHandle(id).describe()).status.name === 'COMPLETED',
      'the exception rest to complete',
      30_000,
    );

    const eraseFirst = async () => {
      const erasure = await request(h.baseUrl, `/v1/dispatches/${id}`, { method: 'DELETE', headers: bearer(key) });
      expect(erasure.status).toBe(202);
      await until(
        async () => (await request(h.baseUrl, `/v1/erasures/${erasure.body.id}`, { headers: bearer(key) })).body.status === 'completed',
        'the erasure to complete',
        ERASURE_WAIT_MS,
      );
    };
    const ingest = createCarrierEventIngest({
      pool: h.pool,
      temporal: clientThatAfterDescribe(eraseFirst),
      taskQueue: h.taskQueue,
      workflowOptions: dispatchWorkflowOptions(h.config),
    });
    outcome = await ingest.ingest({ id, dispatchDate }, { event: { status: 'delivered', occurred_at: daysAgo(18), event_id: 'back-1' } });
  }, ERASURE_WAIT_MS + 60_000);

  it('answers the event as for an erased dispatch', () => {
    expect(outcome.outcome).toBe('erased');
  });

  it('leaves no run of the workflow id in Temporal', async () => {
    // Whatever the run started by the event had begun is given time to land before counting.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await countDispatchRuns(h.temporal, id)).toBe(0);
  });

  it('leaves no row naming the dispatch', async () => {
    const footprint = await dispatchFootprint(h.pool, id);
    expect(Object.entries(footprint).filter(([, count]) => count !== 0)).toEqual([]);
  });
});
