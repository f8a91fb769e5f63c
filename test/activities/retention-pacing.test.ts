// The retention sweep's pacing (activities/retention.ts, docs/configuration.md RETENTION_BATCH_PAUSE):
// one batch at a time, RETENTION_BATCH_PAUSE between two batches, so a backlog's sweep leaves the
// database to live traffic most of the time (bench/retention). The activity runs in Temporal's mock
// activity environment against a database of its own (a sweep must not touch another test file's
// rows) and the test Temporal server (its visibility query per batch); every batch heartbeats, and
// the heartbeats' times show the pacing: two batches at once would heartbeat together.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRetentionActivities } from '../../activities/retention.js';
import { seedCompletedDispatches } from '../../bench/retention/seed.js';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import type { RetentionSummary } from '../../temporal/contract.js';
import { requireTestEnv } from '../support/env.js';
import { shortRetentionConfig } from '../support/retention-config.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const PAUSE_MS = 400;
const BATCH = 20;
const COUNT = 3 * BATCH;

let database: ScratchDatabase;
let pool: Pool;
let connection: Connection;
let temporal: Client;

beforeAll(async () => {
  database = await createScratchDatabase('retention_pacing', { migrate: true });
  pool = createPool(database.url, { max: 2, applicationName: 'test-retention-pacing' });
  connection = await Connection.connect({ address: requireTestEnv('TEST_TEMPORAL_ADDRESS') });
  temporal = new Client({ connection });
  const issuerId = (await createIssuer(pool, 'Retention Pacing Issuer')).id;
  const endpoint = await createWebhookEndpoint(pool, { issuerId, url: 'https://example.com/hooks', events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(endpoint.reason);
  await seedCompletedDispatches(pool, { issuerId, endpointId: endpoint.endpoint.id, count: COUNT, lastChangeAgoMs: 60_000 });
}, 60_000);

afterAll(async () => {
  await connection?.close();
  await pool?.end();
  await database?.drop();
});

const config = shortRetentionConfig;

describe('the retention sweep’s pacing', () => {
  it('erases one batch at a time, RETENTION_BATCH_PAUSE apart', async () => {
    const { applyRetention } = createRetentionActivities({ pool, temporal, config: config(PAUSE_MS) });
    const env = new MockActivityEnvironment({}, { logger: quiet });
    /** When each dispatch batch's heartbeat came, and the total erased by then. */
    const beats: Array<{ at: number; erased: number }> = [];
    env.on('heartbeat', (progress: { phase: string; erased_dispatches: number }) => {
      if (progress.phase === 'dispatches') beats.push({ at: performance.now(), erased: progress.erased_dispatches });
    });
    const summary: RetentionSummary = await env.run(applyRetention, { batchSize: BATCH });

    expect(summary.erased_dispatches).toBe(COUNT);
    expect(beats.map((b) => b.erased)).toEqual([BATCH, 2 * BATCH, 3 * BATCH]);
    for (let i = 1; i < beats.length; i++) expect(beats[i].at - beats[i - 1].at).toBeGreaterThanOrEqual(PAUSE_MS - 5);
  }, 60_000);
});
