// docs/states.md "Failures that no retry fixes", as the last line of defence behind the API's
// own bounds: a dispatch or carrier event that reaches the workflow yet can never be projected (the
// calendar cannot count past year 9999) is refused at once and said so, never retried forever.
// Driven straight through the Temporal client, as a buggy or older API process could, against a
// real worker, the dev server and Postgres.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { insertCarrierEvent } from '../../db/carrier-events.js';
import type { CarrierEventBody } from '../../domain/carrier-event-schemas.js';
import { dedupeKey } from '../../domain/state-machine.js';
import { carrierEventSignal, snapshotQuery, type RegisterOutcome } from '../../temporal/contract.js';
import { startHarness, type Harness } from '../support/harness.js';
import { until } from '../support/until.js';
import { registerDispatch, registration } from '../support/workflow-env.js';

let h: Harness;
let issuerId: string;

beforeAll(async () => {
  h = await startHarness();
  issuerId = await h.createIssuer('Deterministic Failures Issuer');
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/** The update's answer, or `still waiting` after 20 s (today's wedge). */
async function answerWithin(promise: Promise<RegisterOutcome>): Promise<RegisterOutcome | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), 20_000)));
  try {
    return await Promise.race([promise, waited]);
  } finally {
    clearTimeout(timer);
  }
}

async function signal(id: string, event: CarrierEventBody) {
  const key = dedupeKey(event);
  await insertCarrierEvent(h.pool, id, key, event);
  await h.temporal.workflow.getHandle(id).signal(carrierEventSignal, { ...event, dedupeKey: key });
  return key;
}

const effectOf = async (id: string, key: string) =>
  (await h.pool.query('SELECT effect FROM carrier_events WHERE dispatch_id = $1 AND dedupe_key = $2', [id, key])).rows[0]?.effect ??
  undefined;

describe('a registration that can never be projected', () => {
  it('is answered rejected at once and its workflow ends, instead of retrying forever', async () => {
    const reg = registration(issuerId, { dispatchDate: '9999-12-30T00:00:00.000Z' });
    const answer = await answerWithin(registerDispatch(h.temporal, h.taskQueue, reg));
    expect(answer).toMatchObject({ outcome: 'rejected' });
    expect((answer as { reason: string }).reason).toMatch(/cannot project/);
    const result = await h.temporal.workflow.getHandle(reg.id).result();
    expect(result).toEqual({ status: 'rejected', version: 0 });
  });
});

describe('a carrier event whose change can never be projected', () => {
  it('is recorded rejected, leaves the card as it was, and later events still apply', async () => {
    const reg = registration(issuerId, { dispatchDate: new Date().toISOString() });
    expect(await registerDispatch(h.temporal, h.taskQueue, reg)).toMatchObject({ outcome: 'created' });

    const poisoned = await signal(reg.id, { status: 'delivered', occurred_at: '9999-12-31T23:00:00Z' });
    expect(await until(() => effectOf(reg.id, poisoned), 'the poisoned event to be judged', 20_000)).toBe('rejected');
    const handle = h.temporal.workflow.getHandle(reg.id);
    expect((await handle.query(snapshotQuery)).state.status).toBe('dispatched');

    const fine = await signal(reg.id, { status: 'in_transit', occurred_at: new Date().toISOString() });
    expect(await until(() => effectOf(reg.id, fine), 'the next event to be judged', 20_000)).toBe('applied');
    expect((await handle.query(snapshotQuery)).state.status).toBe('in_transit');
  });
});
