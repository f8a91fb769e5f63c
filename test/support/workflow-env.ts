// Workflow-test helpers: a time-skipping test environment on the real Java test server, a worker
// running the real activities against the test Postgres, and registrations to start dispatches with.
import { randomUUID } from 'node:crypto';
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import { copyTransitHistory, type TransitRecord } from '../../db/transit-history.js';
import { createPool, type Pool } from '../../db/pool.js';
import { loadConfig, type Config } from '../../platform/config.js';
import type { Client } from '@temporalio/client';
import type { CarrierEventBody } from '../../domain/carrier-event-schemas.js';
import { dedupeKey } from '../../domain/state-machine.js';
import * as temporalClient from '../../temporal/client.js';
import type { DispatchRegistration, DispatchWorkflowInput, RegisterOutcome } from '../../temporal/contract.js';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.js';
import { installTemporalRuntime } from '../../worker/runtime.js';
import { randomId, requireTestEnv, testLogger } from './env.js';

export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  installTemporalRuntime(testLogger('temporal'), 'WARN');
  const env = await startTestServer();
  // Custom search attributes must exist before the workflow upserts them, as on a real cluster.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      Object.keys(SEARCH_ATTRIBUTES).map((name) => [name, proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
  return env;
}

/**
 * The SDK gives the Java test server a fixed 5 s to accept connections (sdk-core ephemeral_server),
 * which a JVM on two busy cores sometimes misses: a start that timed out is tried again.
 */
async function startTestServer(attempts = 3): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({
        server: { executable: { type: 'existing-path', path: requireTestEnv('TEST_TEMPORAL_TEST_SERVER') } },
      });
    } catch (error) {
      if (attempt >= attempts || !/did not start within/.test(String(error))) throw error;
      testLogger('temporal').warn({ attempt }, 'the time-skipping test server was slow to start; trying again');
    }
  }
}

export function testPool(): Pool {
  return createPool(requireTestEnv('TEST_DATABASE_URL'), { applicationName: 'workflow-test' });
}

/**
 * A worker with the real activities. Webhook receivers in tests listen on 127.0.0.1, so private
 * networks are allowed; the retry schedule is the production one (time skipping makes it fast).
 */
export async function createTestWorker(
  env: TestWorkflowEnvironment,
  pool: Pool,
  taskQueue = randomId('wf'),
  config: Config = loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }),
): Promise<{ worker: Worker; taskQueue: string }> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: requireTestEnv('TEST_WORKFLOW_BUNDLE') },
    activities: createActivities({ pool, config, temporal: env.client }),
  });
  return { worker, taskQueue };
}

export async function insertIssuer(pool: Pool): Promise<string> {
  const id = randomId('iss');
  await pool.query('INSERT INTO issuers (id, name) VALUES ($1, $2)', [id, 'Workflow Test Issuer']);
  return id;
}

export function registration(issuerId: string, overrides: Partial<DispatchRegistration> = {}): DispatchRegistration {
  const destination = overrides.destination ?? { postal_code: '75011', country_code: 'FR' };
  return {
    id: randomUUID(),
    issuerId,
    mode: 'live',
    dispatchDate: '2026-11-20T09:00:00.000Z',
    destination,
    fingerprint: JSON.stringify({ destination }),
    ...overrides,
  };
}

/**
 * Enough delivered history (one delivery a week for a year, each 2 business days, spread over the
 * postal codes given) for the country's history to replace the default table, so carrier conditions
 * move its windows.
 */
export async function seedTransitHistory(pool: Pool, countryCode: string, postalCodes: string[]): Promise<void> {
  const rows: TransitRecord[] = [];
  for (let week = 0; week < 52; week += 1) {
    const dispatched = new Date(Date.now() - (35 + week * 7) * 86_400_000);
    const delivered = new Date(dispatched.getTime() + 2 * 86_400_000);
    rows.push({
      postalCode: postalCodes[week % postalCodes.length],
      countryCode,
      dispatchDate: dispatched.toISOString().slice(0, 10),
      deliveredDate: delivered.toISOString().slice(0, 10),
      businessDays: 2,
    });
  }
  await copyTransitHistory(
    pool,
    (async function* () {
      yield* rows;
    })(),
  );
}

/**
 * Registers a dispatch through the API's own client call (temporal/client.ts); an id whose
 * workflow has closed is an error here (the API answers it from the projection instead).
 */
export async function registerDispatch(
  client: Client,
  taskQueue: string,
  reg: DispatchRegistration,
  options: DispatchWorkflowInput['options'] = {},
): Promise<RegisterOutcome> {
  const result = await temporalClient.registerDispatch(client, { taskQueue, registration: reg, options });
  if (result.outcome === 'closed') throw new Error(`dispatch ${reg.id}: its workflow has closed, the id cannot be registered again`);
  return result;
}

/** Sends a carrier event through the API's own client call, with its dedupe key; a closed workflow is an error here. */
export async function signalCarrierEvent(client: Client, id: string, event: CarrierEventBody): Promise<void> {
  if (!(await temporalClient.signalCarrierEvent(client, id, { ...event, dedupeKey: dedupeKey(event) }))) {
    throw new Error(`dispatch ${id}: its workflow has closed`);
  }
}

export interface TimeSkippingTestbed {
  env: TestWorkflowEnvironment;
  pool: Pool;
  taskQueue: string;
  stop(): Promise<void>;
}

/** The time-skipping server, the test Postgres and a running worker with the real activities. */
export async function startTimeSkippingTestbed(): Promise<TimeSkippingTestbed> {
  const env = await createTimeSkippingEnv();
  const pool = testPool();
  const { worker, taskQueue } = await createTestWorker(env, pool);
  const running = worker.run();
  return {
    env,
    pool,
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
      await pool.end();
      await env.teardown();
    },
  };
}
