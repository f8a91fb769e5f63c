// The dashboard's delivery log of one endpoint (db/delivery-log.ts listAttempts), against the real
// test Postgres: each outcome filter lists exactly its attempts, newest first, and "pending" means
// the attempts of this endpoint's deliveries still waiting for a retry — not another endpoint's
// delivery of the same event. The plan at 10⁵ attempts is test/db/list-plans.test.ts's.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { listAttempts, type Outcome } from '../../db/delivery-log.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { requireTestEnv } from '../support/env.js';
import { insertIssuer } from '../support/workflow-env.js';

let pool: Pool;
let endpoint: string;
let other: string;
const events = { delivered: `evt_${randomUUID()}`, pending: `evt_${randomUUID()}`, undeliverable: `evt_${randomUUID()}` };

beforeAll(async () => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-delivery-log' });
  const issuerId = await insertIssuer(pool);
  const endpoints: string[] = [];
  for (const url of ['https://example.com/a', 'https://example.com/b']) {
    const created = await createWebhookEndpoint(pool, { issuerId, url, events: ['status.updated'] });
    if (!created.ok) throw new Error(created.reason);
    endpoints.push(created.endpoint.id);
  }
  [endpoint, other] = endpoints;
  // Each event's delivery to the endpoint: its state, and its attempts' states after each, in order.
  const deliveries: Array<[string, string, string, string[]]> = [
    [events.delivered, endpoint, 'delivered', ['pending', 'delivered']],
    [events.pending, endpoint, 'pending', ['pending']],
    [events.undeliverable, endpoint, 'undeliverable', ['pending', 'pending', 'undeliverable']],
    // The other endpoint still waits to deliver the event this one delivered.
    [events.delivered, other, 'pending', ['pending']],
  ];
  for (const id of Object.values(events)) {
    await pool.query(
      `INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body) VALUES ($1, $2, $3, 'live', 'status.updated', now(), '\\x7b7d')`,
      [id, randomUUID(), issuerId],
    );
  }
  for (const [eventId, endpointId, state, after] of deliveries) {
    await pool.query(`INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts) VALUES ($1, $2, $3, $4)`, [
      eventId,
      endpointId,
      state,
      after.length,
    ]);
    for (const [i, stateAfter] of after.entries()) {
      await pool.query(
        `INSERT INTO delivery_attempts (event_id, endpoint_id, attempt, started_at, duration_ms, status_code, state_after)
         VALUES ($1, $2, $3, now(), 20, $4, $5)`,
        [eventId, endpointId, i + 1, stateAfter === 'delivered' ? 200 : 500, stateAfter],
      );
    }
  }
});

afterAll(async () => {
  await pool?.end();
});

const name = (id: string) => Object.entries(events).find(([, event]) => event === id)?.[0];

async function listed(endpointId: string, outcome?: Outcome): Promise<string[]> {
  const { attempts } = await listAttempts(pool, endpointId, { limit: 50, outcome });
  return attempts.map((a) => `${name(a.eventId)}#${a.attempt}`);
}

it('lists every attempt of the endpoint newest first, and each outcome exactly its attempts', async () => {
  expect(await listed(endpoint)).toEqual([
    'undeliverable#3',
    'undeliverable#2',
    'undeliverable#1',
    'pending#1',
    'delivered#2',
    'delivered#1',
  ]);
  expect(await listed(endpoint, 'delivered')).toEqual(['delivered#2']);
  expect(await listed(endpoint, 'failed')).toEqual(['undeliverable#3', 'undeliverable#2', 'undeliverable#1', 'pending#1', 'delivered#1']);
  expect(await listed(endpoint, 'undeliverable')).toEqual(['undeliverable#3']);
});

it('pending lists the attempts of the endpoint’s own deliveries still waiting, not of another endpoint’s', async () => {
  expect(await listed(endpoint, 'pending')).toEqual(['pending#1']);
  expect(await listed(other, 'pending')).toEqual(['delivered#1']);
});

it('pages through the log by the last attempt listed, none twice', async () => {
  const first = await listAttempts(pool, endpoint, { limit: 4 });
  expect(first.next).toBe(first.attempts[3].id);
  const second = await listAttempts(pool, endpoint, { limit: 4, before: first.next });
  expect([...first.attempts, ...second.attempts].map((a) => `${name(a.eventId)}#${a.attempt}`)).toEqual(await listed(endpoint));
  expect(second.next).toBeUndefined();
});
