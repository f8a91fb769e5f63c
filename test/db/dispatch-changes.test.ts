// The one transaction of a dispatch's change (db/dispatch-changes.ts), against the real test
// Postgres: idempotent on (dispatch, version), so a write interrupted at any point and retried with
// the same input (the workflow decided it) leaves exactly the webhook events and deliveries of one
// uninterrupted write, and returns the same deliveries to start (fast-check over sequences of
// changes and interruptions); and a late write of an older version changes nothing. The version that
// delivers a dispatch keeps its outcome for the published accuracy once, in a row naming no dispatch.
// A dispatch whose erasure was requested gets nothing written, and no delivery to start.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { writeDispatchChange, type DispatchChange } from '../../db/dispatch-changes.js';
import { requestErasures } from '../../db/erasure-records.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import type { EventEffect, WebhookEventType } from '../../domain/vocabulary.js';
import { requireTestEnv } from '../support/env.js';
import { insertIssuer } from '../support/workflow-env.js';

let pool: Pool;
let issuerId: string;
const DRIVER = 'dispatch:test';

beforeAll(async () => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 4, applicationName: 'test-dispatch-changes' });
  issuerId = await insertIssuer(pool);
  // Two endpoints with overlapping subscriptions, and a paused one whose deliveries are born skipped.
  for (const events of [
    ['status.updated', 'delivery.predicted'],
    ['status.updated', 'delivery.exception', 'delivery.completed'],
  ] as WebhookEventType[][]) {
    const created = await createWebhookEndpoint(pool, { issuerId, url: 'https://example.com/hook', events });
    if (!created.ok) throw new Error(created.reason);
  }
  const paused = await createWebhookEndpoint(pool, { issuerId, url: 'https://example.com/paused', events: ['status.updated'] });
  if (!paused.ok) throw new Error(paused.reason);
  await pool.query(`UPDATE webhook_endpoints SET paused_at = now(), paused_reason = 'manual' WHERE id = $1`, [paused.endpoint.id]);
});

afterAll(async () => {
  await pool?.end();
});

const TYPES: WebhookEventType[] = ['status.updated', 'delivery.exception', 'delivery.completed', 'delivery.predicted'];
const EFFECTS: EventEffect[] = ['applied', 'stale', 'backward', 'unchanged'];

/** Where a write is interrupted before its retry: not at all, before its statement, inside it (rolled back), after its commit (answer lost). */
type Interruption = 'none' | 'before' | 'inside' | 'after';

const stepArb = fc.record({
  events: fc.subarray(TYPES),
  effects: fc.array(fc.constantFrom(...EFFECTS), { maxLength: 3 }),
  interruption: fc.constantFrom<Interruption>('none', 'before', 'inside', 'after'),
  /** A write that only records effects (carrier events that changed nothing). */
  effectsOnly: fc.boolean(),
});

type Step = { events: WebhookEventType[]; effects: EventEffect[]; interruption: Interruption; effectsOnly: boolean };

function changeOf(dispatchId: string, version: number, step: Step, index = 0): DispatchChange {
  const record = { id: dispatchId, status: 'in_transit', version } as unknown as StatusRecord;
  const effects = step.effects.map((effect, i) => ({ dedupeKey: `id:${index}-${i}`, effect }));
  return {
    dispatch: {
      id: dispatchId,
      issuerId,
      mode: 'live',
      dispatchDate: '2026-11-20T09:00:00.000Z',
      postalCode: '75011',
      countryCode: 'FR',
      registration: '{}',
    },
    projection: step.effectsOnly
      ? undefined
      : { version, status: 'in_transit', windowMin: '2026-11-25', windowMax: '2026-11-27', confidenceLevel: 'Medium', record },
    effects,
    events: step.events.map((type) => ({ type, body: Buffer.from(JSON.stringify({ event: type, version }), 'utf8') })),
    timestamp: '2026-11-24T10:00:00.000Z',
  };
}

async function logEvents(dispatchId: string, change: DispatchChange): Promise<void> {
  for (const { dedupeKey } of change.effects) {
    await pool.query(`INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at) VALUES ($1, $2, 'in_transit', now())`, [dispatchId, dedupeKey]); // prettier-ignore
  }
}

/** Writes the change as the activity would with `interruption` before its retry; returns the deliveries the last attempt answered. */
async function write(change: DispatchChange, interruption: Interruption) {
  if (interruption === 'inside') {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await writeDispatchChange(client, change, DRIVER);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  }
  if (interruption === 'after') await writeDispatchChange(pool, change, DRIVER);
  return (await writeDispatchChange(pool, change, DRIVER)).deliveries;
}

/** What a dispatch's changes left, with its id taken out so two dispatches compare. */
async function outcome(dispatchId: string) {
  const events = await pool.query(
    `SELECT replace(e.idempotency_key, $1::text, '*') AS key, e.type, e.body::text AS body,
            coalesce(json_agg(json_build_object('endpoint', d.endpoint_id, 'state', d.state) ORDER BY d.endpoint_id) FILTER (WHERE d.endpoint_id IS NOT NULL), '[]') AS deliveries
       FROM webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
      WHERE e.dispatch_id = $1::uuid GROUP BY e.id ORDER BY key`,
    [dispatchId],
  );
  const projection = await pool.query('SELECT version, status FROM dispatches WHERE id = $1', [dispatchId]);
  const effects = await pool.query('SELECT dedupe_key, effect FROM carrier_events WHERE dispatch_id = $1 ORDER BY dedupe_key', [
    dispatchId,
  ]);
  const log = await pool.query('SELECT version FROM prediction_log WHERE dispatch_id = $1 ORDER BY version', [dispatchId]);
  return { events: events.rows, projection: projection.rows, effects: effects.rows, log: log.rows };
}

describe('a dispatch change written in one transaction', () => {
  it('interrupted and retried at any point, yields exactly the webhook events and deliveries of one uninterrupted write', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 5 }), async (steps) => {
        const reference = randomUUID();
        const interrupted = randomUUID();
        let version = 0;
        for (const [index, step] of steps.entries()) {
          if (!step.effectsOnly) version += 1;
          const expected = changeOf(reference, version, step, index);
          const actual = changeOf(interrupted, version, step, index);
          await logEvents(reference, expected);
          await logEvents(interrupted, actual);
          const answered = await write(expected, 'none');
          const retried = await write(actual, step.interruption);
          const endpointsOf = (rows: Array<{ endpointId: string }>) => rows.map((r) => r.endpointId);
          expect(endpointsOf(retried)).toEqual(endpointsOf(answered));
        }
        const [a, b] = [await outcome(reference), await outcome(interrupted)];
        expect(b).toEqual(a);
      }),
      { numRuns: 40 },
    );
  });

  it('creates one pending delivery per subscribed endpoint, skipped for a paused one, and the events in the order given', async () => {
    const id = randomUUID();
    const change = changeOf(id, 1, {
      events: ['status.updated', 'delivery.predicted'],
      effects: [],
      interruption: 'none',
      effectsOnly: false,
    });
    const deliveries = await writeDispatchChange(pool, change, DRIVER);
    expect(deliveries.written).toBe(true);
    // status.updated → both endpoints that take it (the paused one's is skipped); delivery.predicted → the first.
    expect(deliveries.deliveries).toHaveLength(3);
    const states = (await outcome(id)).events.map((e) => [e.type, (e.deliveries as Array<{ state: string }>).map((d) => d.state).sort()]);
    expect(states).toEqual(
      expect.arrayContaining([
        ['status.updated', ['pending', 'pending', 'skipped']],
        ['delivery.predicted', ['pending']],
      ]),
    );
  });

  it('creates its pending deliveries claimed by the dispatch, and hands each its first attempt with the endpoint as read', async () => {
    const id = randomUUID();
    const result = await writeDispatchChange(pool, changeOf(id, 1, { events: ['status.updated'], effects: [], interruption: 'none', effectsOnly: false }), DRIVER); // prettier-ignore
    const keys = (pairs: string[][]) => pairs.map((pair) => pair.join(' ')).sort();
    expect(keys(result.handed.map((h) => [h.eventId, h.endpoint.id]))).toEqual(
      keys(result.deliveries.map((d) => [d.eventId, d.endpointId])),
    );
    expect(result.handed[0]).toMatchObject({ eventType: 'status.updated', attempts: 0, state: 'pending', endpoint: { url: 'https://example.com/hook', paused: false } }); // prettier-ignore
    expect(result.handed[0].body.toString('utf8')).toBe(JSON.stringify({ event: 'status.updated', version: 1 }));
    const drivers = await pool.query(`SELECT driver, driver_due_at > now() AS due FROM webhook_deliveries WHERE event_id = $1 AND state = 'pending'`, [result.handed[0].eventId]); // prettier-ignore
    expect(drivers.rows).toEqual([
      { driver: DRIVER, due: true },
      { driver: DRIVER, due: true },
    ]);
    // A retry hands nothing over (its deliveries already exist; their runs claim them).
    const again = await writeDispatchChange(pool, changeOf(id, 1, { events: ['status.updated'], effects: [], interruption: 'none', effectsOnly: false }), DRIVER); // prettier-ignore
    expect(again.handed).toEqual([]);
    expect(again.deliveries).toEqual(result.deliveries);
  });

  it('keeps a delivered dispatch’s outcome once, with the window logged at its registration, however the delivering write is interrupted and retried', async () => {
    for (const interruption of ['none', 'before', 'inside', 'after'] as const) {
      const owner = await insertIssuer(pool);
      const id = randomUUID();
      const quiet = { events: [], effects: [], interruption: 'none' as const, effectsOnly: false };
      const of = (change: DispatchChange): DispatchChange => ({ ...change, dispatch: { ...change.dispatch, issuerId: owner } });
      await writeDispatchChange(pool, of(changeOf(id, 1, quiet)), DRIVER);
      const delivered = (version: number): DispatchChange => {
        const change = of(changeOf(id, version, quiet));
        return {
          ...change,
          projection: {
            ...change.projection!,
            status: 'delivered',
            windowMin: '2026-11-28',
            windowMax: '2026-11-28',
            confidenceLevel: 'High',
          },
          outcome: { deliveredDate: '2026-11-28', learned: false, notLearned: ['late_report', 'implausible'] },
        };
      };
      await write(delivered(2), interruption);
      // A later version that is still delivered keeps no second outcome.
      await writeDispatchChange(pool, delivered(3), DRIVER);
      const { rows } = await pool.query(
        `SELECT mode, country_code, dispatch_date, confidence_level, window_min, window_max, delivered_date, learned, not_learned_reasons
           FROM prediction_outcomes WHERE issuer_id = $1`,
        [owner],
      );
      expect({ interruption, rows }).toEqual({
        interruption,
        rows: [
          {
            mode: 'live',
            country_code: 'FR',
            dispatch_date: '2026-11-20',
            confidence_level: 'Medium',
            window_min: '2026-11-25',
            window_max: '2026-11-27',
            delivered_date: '2026-11-28',
            learned: false,
            not_learned_reasons: ['late_report', 'implausible'],
          },
        ],
      });
    }
  });

  it('keeps outcomes that name no dispatch: no column of prediction_outcomes holds a uuid or references another table', async () => {
    const uuids = await pool.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'prediction_outcomes' AND data_type = 'uuid'`); // prettier-ignore
    const references = await pool.query(
      `SELECT conname FROM pg_constraint WHERE conrelid = 'prediction_outcomes'::regclass AND contype = 'f'`,
    );
    expect([uuids.rows, references.rows]).toEqual([[], []]);
  });

  it('answers a retry after a committed attempt with what that attempt wrote, and creates no event the retry decided anew', async () => {
    const id = randomUUID();
    const first = changeOf(id, 1, { events: ['status.updated'], effects: [], interruption: 'none', effectsOnly: false });
    const written = await writeDispatchChange(pool, first, DRIVER);
    // The retry computed another window and so decided another event: the row's version stands.
    const retry = changeOf(id, 1, { events: ['delivery.predicted'], effects: [], interruption: 'none', effectsOnly: false });
    const again = await writeDispatchChange(pool, { ...retry, projection: { ...retry.projection!, windowMin: '2026-12-01', windowMax: '2026-12-03' } }, DRIVER); // prettier-ignore
    expect(again).toMatchObject({ written: false, deliveries: written.deliveries, handed: [] });
    expect(again.current).toMatchObject({ version: 1, windowMin: '2026-11-25', windowMax: '2026-11-27', confidenceLevel: 'Medium' });
    expect((await outcome(id)).events.map((e) => e.type)).toEqual(['status.updated']);
  });

  it('writes a later version without the registration by updating the row the first wrote', async () => {
    const id = randomUUID();
    const step = { events: [] as WebhookEventType[], effects: [], interruption: 'none' as const, effectsOnly: false };
    await writeDispatchChange(pool, changeOf(id, 1, step), DRIVER);
    const second = changeOf(id, 2, step);
    const { registration: _, ...facts } = second.dispatch;
    expect((await writeDispatchChange(pool, { ...second, dispatch: facts }, DRIVER)).written).toBe(true);
    const { rows } = await pool.query('SELECT version, registration FROM dispatches WHERE id = $1', [id]);
    expect(rows).toEqual([{ version: 2, registration: {} }]);
  });

  it('changes no row for a late write of an older version', async () => {
    const id = randomUUID();
    const step = { events: ['status.updated'] as WebhookEventType[], effects: [], interruption: 'none' as const, effectsOnly: false };
    await writeDispatchChange(pool, changeOf(id, 2, step), DRIVER);
    const late = await writeDispatchChange(pool, changeOf(id, 1, step), DRIVER);
    expect(late.written).toBe(false);
    expect((await outcome(id)).projection).toEqual([{ version: 2, status: 'in_transit' }]);
  });

  it('writes nothing for a dispatch whose erasure was requested, answers erased and no delivery, a retry of a committed write included', async () => {
    const id = randomUUID();
    const step = { events: ['status.updated'] as WebhookEventType[], effects: ['applied'] as EventEffect[], interruption: 'none' as const, effectsOnly: false }; // prettier-ignore
    const first = changeOf(id, 1, step);
    await logEvents(id, first);
    expect((await writeDispatchChange(pool, first, DRIVER)).erased).toBe(false);
    await requestErasures(pool, [id]);
    const before = await outcome(id);
    const retry = await writeDispatchChange(pool, first, DRIVER);
    expect(retry).toMatchObject({ written: false, erased: true, deliveries: [], handed: [] });
    expect(retry.current).toBeUndefined();
    const second = changeOf(id, 2, { ...step, effects: ['stale'] });
    const { registration: _, ...facts } = second.dispatch;
    expect(await writeDispatchChange(pool, { ...second, dispatch: facts }, DRIVER)).toMatchObject({ written: false, erased: true, deliveries: [], handed: [] }); // prettier-ignore
    expect(await outcome(id)).toEqual(before);
  });
});
