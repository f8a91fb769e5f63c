// The dispatch workflow on a real Temporal dev server: what an operator sees (search attributes to
// filter by, current details), and continue-as-new when the server itself suggests it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Pool } from '../../db/pool.js';
import type { CarrierEventBody } from '../../domain/carrier-event-schemas.js';
import { loadConfig } from '../../platform/config.js';
import { freePort } from '../../devtools/postgres.js';
import { startDevServer, type RunningDevServer } from '../../devtools/temporal-dev-server.js';
import { createWorker } from '../../worker/create-worker.js';
import { DISPATCH_WORKFLOW_TYPE, snapshotQuery, type DispatchRegistration } from '../../temporal/contract.js';
import { installTemporalRuntime } from '../../worker/runtime.js';
import { randomId, requireTestEnv, testLogger } from '../support/env.js';
import { insertIssuer, registerDispatch, registration, signalCarrierEvent, testPool } from '../support/workflow-env.js';

interface Cluster {
  client: Client;
  worker: Worker;
  taskQueue: string;
  stop(): Promise<void>;
}

async function connect(address: string, pool: Pool): Promise<Cluster> {
  installTemporalRuntime(testLogger('temporal'), 'WARN');
  const taskQueue = randomId('dev');
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await createWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    pool,
    config: loadConfig({}),
    workflowBundle: { codePath: requireTestEnv('TEST_WORKFLOW_BUNDLE') },
  });
  const running = worker.run();
  return {
    client: new Client({ connection }),
    worker,
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
      await nativeConnection.close();
      await connection.close();
    },
  };
}

const register = (cluster: Cluster, reg: DispatchRegistration) => registerDispatch(cluster.client, cluster.taskQueue, reg);
const signal = (cluster: Cluster, id: string, event: CarrierEventBody) => signalCarrierEvent(cluster.client, id, event);

async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let pool: Pool;
let issuerId: string;

beforeAll(async () => {
  pool = testPool();
  issuerId = await insertIssuer(pool);
});

afterAll(async () => {
  await pool?.end();
});

describe('operator view in the Temporal UI', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await connect(requireTestEnv('TEST_TEMPORAL_ADDRESS'), pool);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('lets an operator filter dispatches by DispatchStatus, IssuerId and CountryCode', async () => {
    const reg = registration(issuerId, { destination: { postal_code: '10115', country_code: 'DE' } });
    await register(cluster, reg);
    await signal(cluster, reg.id, { status: 'in_transit', occurred_at: '2026-11-20T12:00:00Z', event_id: 'sa1' });
    const query = `DispatchStatus = "in_transit" AND IssuerId = "${issuerId}" AND CountryCode = "DE"`;
    const found = await eventually(async () => {
      for await (const execution of cluster.client.workflow.list({ query })) if (execution.workflowId === reg.id) return execution;
      return undefined;
    }, 'the dispatch to be listed by its search attributes');
    expect(found.type).toBe(DISPATCH_WORKFLOW_TYPE);
  });

  it('shows the current status and delivery window as the workflow current details', async () => {
    const reg = registration(issuerId);
    await register(cluster, reg);
    await signal(cluster, reg.id, { status: 'exception', occurred_at: '2026-11-21T08:00:00Z', reason: 'postal_delay', event_id: 'cd1' });
    const details = await eventually(async () => {
      const metadata = (await cluster.client.workflow.getHandle(reg.id).query('__temporal_workflow_metadata')) as {
        currentDetails?: string;
      };
      return metadata.currentDetails?.includes('exception') ? metadata.currentDetails : undefined;
    }, 'current details to show the exception');
    expect(details).toContain('**Status:** exception (postal_delay)');
    expect(details).toMatch(/\*\*Delivery window:\*\* \d{4}-\d{2}-\d{2} → \d{4}-\d{2}-\d{2} \((High|Medium|Low)\)/);
  });
});

describe('continue-as-new suggested by the server', () => {
  let server: RunningDevServer;
  let cluster: Cluster;
  beforeAll(async () => {
    // A dev server of its own whose history limit suggests continue-as-new after 30 events.
    server = await startDevServer({
      cliPath: requireTestEnv('TEST_TEMPORAL_CLI'),
      port: await freePort(),
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 },
    });
    cluster = await connect(server.address, pool);
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop();
    await server?.stop();
  });

  it('continues as new when Temporal suggests it, keeping state, version and dedupe', async () => {
    const reg = registration(issuerId);
    await register(cluster, reg);
    const handle = cluster.client.workflow.getHandle(reg.id);
    const firstRunId = (await handle.describe()).runId;
    const statuses = ['in_transit', 'exception', 'exception', 'exception', 'exception', 'out_for_delivery'] as const;
    for (const [i, status] of statuses.entries()) {
      await signal(cluster, reg.id, {
        status,
        occurred_at: `2026-11-21T0${i}:00:00Z`,
        event_id: `can${i}`,
        reason: status === 'exception' ? 'postal_delay' : undefined,
      });
      await eventually(async () => ((await handle.query(snapshotQuery)).version >= i + 2 ? true : undefined), `version ${i + 2}`);
    }
    const description = await handle.describe();
    expect(description.runId).not.toBe(firstRunId);
    // A resent early event is still known to the new run and changes nothing.
    await signal(cluster, reg.id, { status: 'in_transit', occurred_at: '2026-11-21T00:00:00Z', event_id: 'can0' });
    const snapshot = await eventually(async () => {
      const s = await handle.query(snapshotQuery);
      return s.pendingEvents === 0 ? s : undefined;
    }, 'the resent event to be handled');
    expect(snapshot).toMatchObject({ version: 7, seenEventKeys: 6, state: { status: 'out_for_delivery' } });
    const { rows } = await pool.query('SELECT version, status FROM dispatches WHERE id = $1', [reg.id]);
    expect(rows[0]).toEqual({ version: 7, status: 'out_for_delivery' });
  });
});
