// The retention sweep racing a carrier event that restarts a dispatch it is erasing
// (activities/retention.ts, docs/privacy.md "What is kept, and for how long"). A batch looks up its
// dispatches' runs, deletes them, then erases their rows with their tombstones; a late carrier event
// for a card resting in exception, arriving in between, starts a run again from the projection, with
// the registration (postal code, tracking number, reference) in its input. Without a last look after
// the rows, that run outlived the erasure. The interleaving is forced: the sweep is given the real
// Temporal client, whose visibility listing starts such a run once it has answered. The activity runs
// in Temporal's mock activity environment against a database of its own and the test Temporal server.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRetentionActivities } from '../../activities/retention.js';
import { seedCompletedDispatches } from '../../bench/retention/seed.js';
import { dispatchFootprint } from '../../db/erasure.js';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { DISPATCH_WORKFLOW_TYPE, type RetentionSummary } from '../../temporal/contract.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { requireTestEnv } from '../support/env.js';
import { shortRetentionConfig } from '../support/retention-config.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

let database: ScratchDatabase;
let pool: Pool;
let connection: Connection;
let temporal: Client;
let dispatchId: string;

beforeAll(async () => {
  database = await createScratchDatabase('retention_restart_race', { migrate: true });
  pool = createPool(database.url, { max: 2, applicationName: 'test-retention-restart-race' });
  connection = await Connection.connect({ address: requireTestEnv('TEST_TEMPORAL_ADDRESS') });
  temporal = new Client({ connection });
  const issuerId = (await createIssuer(pool, 'Retention Race Issuer')).id;
  const endpoint = await createWebhookEndpoint(pool, { issuerId, url: 'https://example.com/hooks', events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(endpoint.reason);
  [dispatchId] = await seedCompletedDispatches(pool, { issuerId, endpointId: endpoint.endpoint.id, count: 1, lastChangeAgoMs: 60_000 });
}, 60_000);

afterAll(async () => {
  await connection?.close();
  await pool?.end();
  await database?.drop();
});

const config = shortRetentionConfig();

/** The client, except that each visibility listing, once read to its end, runs `after`. */
function clientThatAfterListing(after: () => Promise<void>): Client {
  const bind = (target: object, prop: string | symbol) => {
    const value = Reflect.get(target, prop, target) as unknown;
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  };
  const workflow = new Proxy(temporal.workflow, {
    get(target, prop) {
      if (prop !== 'list') return bind(target, prop);
      return (...args: Parameters<typeof target.list>) => {
        const listed = target.list(...args);
        return (async function* () {
          yield* listed;
          await after();
        })();
      };
    },
  });
  return new Proxy(temporal, { get: (target, prop) => (prop === 'workflow' ? workflow : bind(target, prop)) });
}

describe('a dispatch restarted by a carrier event while the retention sweep erases it', () => {
  let erased: number;

  beforeAll(async () => {
    let restarted = false;
    // What the ingest's restart starts (ingest/carrier-events.ts): a run of the dispatch's workflow id
    // holding the registration. Nothing polls this task queue; the run only has to exist.
    const restart = async () => {
      if (restarted) return;
      restarted = true;
      await temporal.workflow.start(DISPATCH_WORKFLOW_TYPE, {
        workflowId: dispatchId,
        taskQueue: `nobody-${randomUUID()}`,
        args: [{ registration: { id: dispatchId, destination: { postal_code: '75011', country_code: 'FR' } } }],
      });
    };
    const { applyRetention } = createRetentionActivities({ pool, temporal: clientThatAfterListing(restart), config });
    const summary: RetentionSummary = await new MockActivityEnvironment({}, { logger: quiet }).run(applyRetention, {});
    expect(restarted).toBe(true);
    erased = summary.erased_dispatches;
  }, 60_000);

  it('erases the dispatch', async () => {
    expect(erased).toBe(1);
    const footprint = await dispatchFootprint(pool, dispatchId);
    expect(Object.entries(footprint).filter(([, count]) => count !== 0)).toEqual([]);
  });

  it('leaves no run of its workflow id in Temporal', async () => {
    expect(await countDispatchRuns(temporal, dispatchId)).toBe(0);
  });
});
