// No personal data in the logs (docs/privacy.md "What is kept, and for how long"): a dispatch is driven
// through registration, carrier events, a failing webhook endpoint and three database errors whose
// driver detail copies the failing row (in the API, storing an Idempotency-Key response and writing a
// carrier event; in the worker, writing the projection of an exception), with the API and the worker as real processes at debug
// level. None of its postal code, tracking number, reference or locations may show in what either
// process wrote. The database is the test's own: the constraints that make the writes fail touch no
// other test file.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { bearer, request } from '../api/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startRetentionService, type RetentionService } from '../support/retention-service.js';
import { startEntryPoint, type Started } from '../support/processes.js';
import { requireTestEnv } from '../support/env.js';
import { until } from '../support/until.js';

const PERSONAL = {
  postalCode: 'EH99 1SP',
  trackingNumber: 'PRIVTRK7731QX',
  reference: 'PRIV-REF-5521-ZK',
  location: 'PRIVATE DEPOT 42 HIGH STREET',
  failingLocation: 'PRIVATE DEPOT 99 FAILING ROAD',
};

let s: RetentionService;
let api: Started;
let receiver: Receiver;
let key: string;
const dispatchId = randomUUID();

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  s = await startRetentionService('log_privacy', {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1s',
    LOG_LEVEL: 'debug',
  });
  // A stored Idempotency-Key response (the dispatch's record), and a carrier event at the failing
  // location, are refused by the database: its error detail would copy the whole row.
  await s.h.pool.query(`ALTER TABLE idempotency_keys ADD CONSTRAINT privacy_probe_response CHECK (body IS NULL)`);
  await s.h.pool.query(
    `ALTER TABLE carrier_events ADD CONSTRAINT privacy_probe CHECK (location IS DISTINCT FROM $$${PERSONAL.failingLocation}$$)`,
  );
  // …and so is the projection of an exception, in the worker: its detail would copy the whole dispatch row.
  await s.h.pool.query(`ALTER TABLE dispatches ADD CONSTRAINT privacy_probe_projection CHECK (status <> 'exception')`);
  receiver = await startReceiver({ respond: () => 500, responseBody: 'upstream said no' });
  const issuerId = await s.h.createIssuer();
  key = (await s.h.createKey(issuerId)).key;
  const endpoint = await createWebhookEndpoint(s.h.pool, {
    issuerId,
    url: receiver.url,
    events: ['status.updated', 'delivery.predicted', 'delivery.exception', 'delivery.completed'],
  });
  if (!endpoint.ok) throw new Error(endpoint.reason);
  await s.startWorker();
  api = await startEntryPoint(
    'api/main.ts',
    {
      DATABASE_URL: s.databaseUrl,
      TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
      TEMPORAL_TASK_QUEUE: s.h.taskQueue,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      LOG_LEVEL: 'debug',
    },
    'API listening',
  );
}, 120_000);

afterAll(async () => {
  api?.child.kill('SIGTERM');
  await api?.exited;
  await receiver?.close();
  await s?.stop();
});

describe('a dispatch driven through errors leaves no personal data in the logs', () => {
  it('registers, takes carrier events, fails its webhooks and three database writes', async () => {
    const baseUrl = /"url":"([^"]+)"/.exec(api.output())![1];
    const registered = await request(baseUrl, '/v1/dispatches', {
      method: 'POST',
      headers: { ...bearer(key), 'idempotency-key': `privacy-${dispatchId}` },
      body: {
        id: dispatchId,
        destination: { postal_code: PERSONAL.postalCode, country_code: 'GB' },
        carrier: 'royal-mail',
        tracking_number: PERSONAL.trackingNumber,
        reference: PERSONAL.reference,
      },
    });
    expect(registered.status).toBe(201);
    const event = (status: string, location: string, eventId: string, reason?: string) =>
      request(baseUrl, `/v1/dispatches/${dispatchId}/events`, {
        method: 'POST',
        headers: bearer(key),
        body: { status, occurred_at: new Date().toISOString(), location, event_id: eventId, ...(reason && { reason }) },
      });
    expect((await event('in_transit', PERSONAL.location, 'scan-1')).status).toBe(202);
    // The API's write of this event fails: 500, logged.
    expect((await event('out_for_delivery', PERSONAL.failingLocation, 'scan-2')).status).toBe(500);
    // Accepted, but its projection fails in the worker.
    expect((await event('exception', PERSONAL.location, 'scan-3', 'failed_attempt')).status).toBe(202);
    // The webhook endpoint answered 500 to every attempt until the last.
    await until(
      async () => (await s.h.pool.query(`SELECT 1 FROM webhook_deliveries WHERE state = 'undeliverable'`)).rowCount! > 0,
      'an undeliverable webhook',
    );
    // Both database errors happened and were logged (so the check below reads real failures).
    const logged = (output: () => string, text: string, what: string) =>
      until(() => output().includes(text), what, 30_000).catch((error: Error) => {
        throw new Error(`${error.message}; it wrote:\n${output().slice(-3000)}`);
      });
    await logged(api.output, 'idempotency key response not stored', 'the API logging its Idempotency-Key write failing');
    await logged(api.output, '"constraint":"privacy_probe"', 'the API logging its carrier event write failing');
    await logged(() => s.worker()!.output(), 'privacy_probe_projection', 'the worker logging its projection write failing');
  }, 120_000);

  it.each(Object.entries(PERSONAL))('the API’s and the worker’s output never hold the %s', (_name, value) => {
    const apiOutput = api.output();
    const workerOutput = s.worker()!.output();
    expect(apiOutput.length).toBeGreaterThan(0);
    expect(apiOutput).not.toContain(value);
    expect(workerOutput).not.toContain(value);
    // The log lines name the dispatch by its id instead.
    expect(workerOutput).toContain(dispatchId);
  });
});
