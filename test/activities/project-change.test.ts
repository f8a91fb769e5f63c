// The one local activity of a change (activities/projection.ts projectChange), against the real
// test Postgres: idempotent on (dispatch, version), a retry after a committed attempt answers what
// that attempt wrote — its prediction and its deliveries — even when it computed another change.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createProjectionActivities, type ChangeInput, type ChangeResult } from '../../activities/projection.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { requireTestEnv } from '../support/env.js';
import { insertIssuer, registration } from '../support/workflow-env.js';

let pool: Pool;
const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-project-change' });
});

afterAll(async () => {
  await pool?.end();
});

describe('a change projected by one local activity', () => {
  it('answers a retry after a committed attempt with that attempt’s prediction and deliveries, whatever it computed again', async () => {
    const issuerId = await insertIssuer(pool);
    const endpoint = await createWebhookEndpoint(pool, { issuerId, url: 'https://example.com/hook', events: ['status.updated', 'delivery.predicted'] }); // prettier-ignore
    if (!endpoint.ok) throw new Error(endpoint.reason);
    const reg = registration(issuerId);
    const { id, mode, dispatchDate, destination, carrier, trackingNumber, reference, fingerprint } = reg;
    // Its predictions made as of one day: the second change's would differ from the first's after
    // midnight UTC (a passed window starts on today's business day) and add a delivery.predicted.
    const { projectChange } = createProjectionActivities({ pool, now: () => new Date('2026-11-24T12:00:00Z') });
    const run = (input: ChangeInput): Promise<ChangeResult> =>
      new MockActivityEnvironment({}, { logger: quiet }).run(projectChange, input).then((r) => r as ChangeResult);
    const dispatch = { id, issuerId, mode, dispatchDate, destination };
    const dispatched = { status: 'dispatched' as const, statusSince: dispatchDate };
    const first = await run({ dispatch, registration: { carrier, trackingNumber, reference, fingerprint }, version: 1, state: dispatched, effects: [], timestamp: dispatchDate, withRecord: true }); // prettier-ignore
    expect(first.record?.status).toBe('dispatched');
    const inTransit = { status: 'in_transit' as const, statusSince: dispatchDate };
    const input: ChangeInput = { dispatch, version: 2, state: inTransit, previous: { state: dispatched, prediction: first.prediction }, effects: [], timestamp: dispatchDate }; // prettier-ignore
    const written = await run(input);
    expect(written.deliveries).toHaveLength(1);
    // The retry computed a delivered card (another window, other events): the version already written stands.
    const delivered = { status: 'delivered' as const, statusSince: dispatchDate };
    const retried = await run({ ...input, state: delivered, withRecord: true });
    expect(retried.prediction).toEqual(written.prediction);
    expect(retried.deliveries).toEqual(written.deliveries);
    expect(retried.record?.status).toBe('in_transit');
  });
});
