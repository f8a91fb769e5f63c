// The one Temporal client (temporal/client.ts): Temporal unreachable is thrown as
// TemporalUnavailable, a closed or unknown workflow is a result. Against the test dev server, with
// no worker: no call here needs a workflow to run.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { querySnapshot, registerDispatch, signalCarrierEvent, signalRefresh, TemporalUnavailable } from '../../temporal/client.js';
import { DISPATCH_WORKFLOW_TYPE, type DispatchRegistration } from '../../temporal/contract.js';
import { randomId, requireTestEnv } from '../support/env.js';
import { UNREACHABLE_CLOSE_MS, unreachableTemporal } from '../support/unreachable-temporal.js';

const registration = (): DispatchRegistration => ({
  id: randomUUID(),
  issuerId: 'iss_client_test',
  mode: 'live',
  dispatchDate: '2026-11-20T09:00:00.000Z',
  destination: { postal_code: '75011', country_code: 'FR' },
  fingerprint: '{}',
});
const event = { status: 'in_transit', occurred_at: '2026-11-21T09:00:00Z', dedupeKey: 'k1' } as const;

describe('when the Temporal frontend cannot be reached', () => {
  let unreachable: ReturnType<typeof unreachableTemporal>;
  let temporal: Client;

  beforeAll(() => {
    unreachable = unreachableTemporal();
    temporal = unreachable.temporal;
  });

  afterAll(async () => {
    await unreachable?.close();
  }, UNREACHABLE_CLOSE_MS + 5_000);

  it('registerDispatch throws TemporalUnavailable', async () => {
    await expect(registerDispatch(temporal, { taskQueue: 'nowhere', registration: registration() })).rejects.toBeInstanceOf(
      TemporalUnavailable,
    );
  }, 30_000);

  it('signalCarrierEvent throws TemporalUnavailable', async () => {
    await expect(signalCarrierEvent(temporal, randomUUID(), event)).rejects.toBeInstanceOf(TemporalUnavailable);
  }, 30_000);
});

describe('on a reachable Temporal', () => {
  let connection: Connection;
  let temporal: Client;

  beforeAll(async () => {
    connection = await Connection.connect({ address: requireTestEnv('TEST_TEMPORAL_ADDRESS') });
    temporal = new Client({ connection });
  });

  afterAll(async () => {
    await connection?.close();
  });

  it('registerDispatch answers closed for an id whose workflow has ended, and starts no new run', async () => {
    const reg = registration();
    const taskQueue = randomId('client');
    const first = await temporal.workflow.start(DISPATCH_WORKFLOW_TYPE, { workflowId: reg.id, taskQueue, args: [{ registration: reg }] });
    await first.terminate('test: the workflow has ended');

    expect(await registerDispatch(temporal, { taskQueue, registration: reg })).toEqual({ outcome: 'closed' });
    expect((await temporal.workflow.getHandle(reg.id).describe()).runId).toBe(first.firstExecutionRunId);
  });

  it('signalCarrierEvent and signalRefresh answer false for a dispatch without a workflow', async () => {
    const id = randomUUID();
    expect(await signalCarrierEvent(temporal, id, event)).toBe(false);
    expect(await signalRefresh(temporal, id, { version: 1, statisticsAsOf: new Date().toISOString() })).toBe(false);
  });

  it('querySnapshot answers undefined for a dispatch without a workflow', async () => {
    expect(await querySnapshot(temporal, randomUUID())).toBeUndefined();
  });
});
