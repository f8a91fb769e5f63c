// Two retention sweeps over the same due dispatches at once (activities/retention.ts): an operator's
// `npm run admin -- retention run` overlapping the daily Schedule's sweep. Both find the same
// dispatches due; one transaction erases each (db/erasure.ts locks its rows, the other finds them
// gone). The summaries' `erased_dispatches` and cds_retention_erased_total{kind="dispatch"} counted
// what each sweep attempted, so such a dispatch was counted twice. The overlap is forced: the sweeps
// are given the real Temporal client, whose visibility listing (the batch's look-up of runs, after
// its due dispatches were read) answers only once both sweeps have asked. The activities run in
// Temporal's mock activity environment against a database of their own and the test Temporal server.
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
import { retentionErased } from '../../platform/metrics.js';
import type { RetentionSummary } from '../../temporal/contract.js';
import { requireTestEnv } from '../support/env.js';
import { shortRetentionConfig } from '../support/retention-config.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const COUNT = 30;

let database: ScratchDatabase;
let pool: Pool;
let connection: Connection;
let temporal: Client;
let ids: string[];

beforeAll(async () => {
  database = await createScratchDatabase('retention_concurrent', { migrate: true });
  pool = createPool(database.url, { max: 6, applicationName: 'test-retention-concurrent' });
  connection = await Connection.connect({ address: requireTestEnv('TEST_TEMPORAL_ADDRESS') });
  temporal = new Client({ connection });
  const issuerId = (await createIssuer(pool, 'Retention Concurrent Issuer')).id;
  const endpoint = await createWebhookEndpoint(pool, { issuerId, url: 'https://example.com/hooks', events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(endpoint.reason);
  ids = await seedCompletedDispatches(pool, { issuerId, endpointId: endpoint.endpoint.id, count: COUNT, lastChangeAgoMs: 60_000 });
}, 60_000);

afterAll(async () => {
  await connection?.close();
  await pool?.end();
  await database?.drop();
});

const config = shortRetentionConfig();

/** The client, except that a visibility listing answers only once `sweeps` listings have been asked for. */
function clientListingTogether(sweeps: number): Client {
  let asked = 0;
  let together!: () => void;
  const all = new Promise<void>((resolve) => (together = resolve));
  const bind = (target: object, prop: string | symbol) => {
    const value = Reflect.get(target, prop, target) as unknown;
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  };
  const workflow = new Proxy(temporal.workflow, {
    get(target, prop) {
      if (prop !== 'list') return bind(target, prop);
      return (...args: Parameters<typeof target.list>) => {
        if (++asked >= sweeps) together();
        return (async function* () {
          await all;
          yield* target.list(...args);
        })();
      };
    },
  });
  return new Proxy(temporal, { get: (target, prop) => (prop === 'workflow' ? workflow : bind(target, prop)) });
}

const metric = async () => (await retentionErased.get()).values.find((v) => v.labels.kind === 'dispatch')?.value ?? 0;

describe('two retention sweeps at once over the same due dispatches', () => {
  let summaries: RetentionSummary[];
  let counted: number;

  beforeAll(async () => {
    const before = await metric();
    const { applyRetention } = createRetentionActivities({ pool, temporal: clientListingTogether(2), config });
    summaries = await Promise.all(
      [0, 1].map(() => new MockActivityEnvironment({}, { logger: quiet }).run(applyRetention, {}) as Promise<RetentionSummary>),
    );
    counted = (await metric()) - before;
  }, 60_000);

  it('erase every one of them', async () => {
    for (const id of ids) expect(Object.entries(await dispatchFootprint(pool, id)).filter(([, n]) => n !== 0)).toEqual([]);
  });

  it('count each once: their erased_dispatches add up to the number erased, and so does cds_retention_erased_total', () => {
    expect(summaries[0].erased_dispatches + summaries[1].erased_dispatches).toBe(COUNT);
    expect(counted).toBe(COUNT);
  });
});
