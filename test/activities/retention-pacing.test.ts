// The retention sweep's pacing (activities/retention.ts, docs/configuration.md RETENTION_BATCH_PAUSE):
// one batch at a time, RETENTION_BATCH_PAUSE between two batches, so a backlog's sweep leaves the
// database to live traffic most of the time (bench/retention). The activity runs in Temporal's mock
// activity environment against a database of its own (a sweep must not touch another test file's
// rows) and the test Temporal server (its visibility query per batch); every batch heartbeats, and
// the heartbeats' times show the pacing: two batches at once would heartbeat together.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRetentionActivities, type RetentionDeps } from '../../activities/retention.js';
import { seedCompletedDispatches } from '../../bench/retention/seed.js';
import { createIssuer } from '../../db/issuers.js';
import { migrate } from '../../db/migrate.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import type { RetentionSummary } from '../../temporal/contract.js';
import { requireTestEnv } from '../support/env.js';

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const PAUSE_MS = 400;
const BATCH = 20;
const COUNT = 3 * BATCH;

let admin: Pool;
let pool: Pool;
let connection: Connection;
let temporal: Client;
const database = `retention_pacing_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  admin = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 1, applicationName: 'test-retention-pacing' });
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(requireTestEnv('TEST_DATABASE_URL'));
  url.pathname = `/${database}`;
  await migrate(url.toString());
  pool = createPool(url.toString(), { max: 2, applicationName: 'test-retention-pacing' });
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
  await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.end();
});

const config = (pauseMs: number): RetentionDeps['config'] => ({
  RETENTION_DISPATCH: 1_000,
  RETENTION_WEBHOOK_PAYLOAD: null,
  RETENTION_TRANSIT_HISTORY: null,
  RETENTION_BATCH_PAUSE: pauseMs,
  DELIVERED_RETENTION: 1_000,
  EXCEPTION_RETENTION: 1_000,
});

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
