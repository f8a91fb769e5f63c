// docs/predictions.md "History and its bounds", end to end: one issuer registers and delivers
// hundreds of crafted FR dispatches through the API (POST /v1/dispatches, then a `delivered`
// carrier event), and another issuer's FR windows, as its registrations are answered, stay exactly
// what they were. On a database of its own (created and migrated for this file), so the FR history
// it writes reaches no other test file's predictions.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { copyTransitHistory, type TransitRecord } from '../../db/transit-history.js';
import { startHarness, type Harness } from '../support/harness.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';
import { until } from '../support/until.js';
import { bearer, request } from './http.js';

const DAY = 86_400_000;
const ATTACK_SIZE = 300;
/** The attacked postal code, another of its prefix, and one of another prefix. */
const CODES = ['33100', '33200', '44000'];

let database: ScratchDatabase;
let h: Harness;
const harnesses: Harness[] = [];

const today = new Date().toISOString().slice(0, 10);
const daysAgo = (days: number) => new Date(Date.parse(`${today}T00:00:00Z`) - days * DAY).toISOString().slice(0, 10);

beforeAll(async () => {
  database = await createScratchDatabase('cds_isolation', { migrate: true });
  h = await startHarness({ env: { DATABASE_URL: database.url } });
  harnesses.push(h);
  // Two years of ordinary FR deliveries to each code: 2–4 business days, ten of them recent.
  const rows: TransitRecord[] = CODES.flatMap((postalCode) => [
    ...Array.from({ length: 120 }, (_, i) => ({ postalCode, ago: 35 + i * 5, days: 2 + (i % 3) })),
    ...Array.from({ length: 10 }, (_, i) => ({ postalCode, ago: 8 + i, days: 2 + (i % 3) })),
  ]).map(({ postalCode, ago, days }) => ({
    postalCode,
    countryCode: 'FR',
    dispatchDate: daysAgo(ago),
    deliveredDate: daysAgo(ago - days - 1),
    businessDays: days,
  }));
  await copyTransitHistory(
    h.pool,
    (async function* () {
      yield* rows;
    })(),
  );
}, 120_000);

afterAll(async () => {
  for (const harness of harnesses) await harness.stop();
  await database?.drop();
});

/**
 * The windows a fresh issuer's registrations to every code are answered with, through a new
 * worker: its country statistics are read now, not served from an earlier cached read. Dispatched
 * on `today` (not at the moment of registration), so that the windows read before and after an
 * attack are the same when the test crosses midnight UTC between the two.
 */
async function windowsOfAnotherIssuer(): Promise<Record<string, unknown>> {
  const fresh = harnesses.length === 1 ? h : await startHarness({ env: { DATABASE_URL: database.url } });
  if (fresh !== h) harnesses.push(fresh);
  const key = (await fresh.createKey(await fresh.createIssuer('Bystander Issuer'))).key;
  const windows: Record<string, unknown> = {};
  for (const postalCode of CODES) {
    const res = await request(fresh.baseUrl, '/v1/dispatches', {
      headers: bearer(key),
      body: { id: randomUUID(), dispatch_date: `${today}T09:00:00Z`, destination: { postal_code: postalCode, country_code: 'FR' } },
    });
    expect(res.status).toBe(201);
    windows[postalCode] = res.body.prediction;
  }
  return windows;
}

/** Registers `count` live dispatches of a new issuer to `postalCode` and delivers each, `parallel` at a time. */
async function deliverAsAttacker(count: number, dispatchDate: string, deliveredAt: string): Promise<string> {
  const issuerId = await h.createIssuer('Skewing Issuer');
  const key = (await h.createKey(issuerId)).key;
  const deliverOne = async () => {
    const id = randomUUID();
    const registered = await request(h.baseUrl, '/v1/dispatches', {
      headers: bearer(key),
      body: { id, dispatch_date: dispatchDate, destination: { postal_code: CODES[0], country_code: 'FR' } },
    });
    expect(registered.status).toBe(201);
    const event = await request(h.baseUrl, `/v1/dispatches/${id}/events`, {
      headers: bearer(key),
      body: { status: 'delivered', occurred_at: deliveredAt },
    });
    expect(event.status).toBe(202);
  };
  const parallel = 10;
  for (let start = 0; start < count; start += parallel)
    await Promise.all(Array.from({ length: Math.min(parallel, count - start) }, deliverOne));
  await until(async () => {
    const { rows } = await h.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM dispatches WHERE issuer_id = $1 AND status = 'delivered'",
      [issuerId],
    );
    return rows[0].n === count;
  }, `${count} deliveries projected`);
  return issuerId;
}

describe('an issuer posting hundreds of crafted FR deliveries', () => {
  it(`leaves another issuer's FR windows unchanged after ${ATTACK_SIZE} implausible deliveries (dispatched 80 days ago, delivered today)`, async () => {
    const before = await windowsOfAnotherIssuer();
    const attacker = await deliverAsAttacker(ATTACK_SIZE, `${daysAgo(80)}T09:00:00Z`, new Date(Date.now() - 60_000).toISOString());
    const { rows } = await h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM transit_history WHERE issuer_id = $1', [attacker]);
    expect(rows[0].n).toBe(0);
    expect(await windowsOfAnotherIssuer()).toEqual(before);
  }, 600_000);

  // Each of these is plausible and already mature (dispatched over MATURITY_DAYS ago), so, joined,
  // they would enter the long-run histograms: before the prompt-report rule they did, and widened
  // the windows of 33100 and its prefix's 33200 from 2–4 business days to 0–8. Registered 60 days
  // after their dispatch date and delivered events posted 48 days after they occurred, they are
  // late reports: the dispatches complete, and none joins the shared history.
  it(`leaves another issuer's FR windows unchanged after ${ATTACK_SIZE} slow but plausible back-dated deliveries`, async () => {
    const before = await windowsOfAnotherIssuer();
    // Dispatched 60 days ago and delivered 12 days later (8 business days, within 3 × FR's p99 of 4):
    // each one plausible, old enough to count in the long-run history, not among the recent ones.
    const attacker = await deliverAsAttacker(ATTACK_SIZE, `${daysAgo(60)}T09:00:00Z`, `${daysAgo(48)}T12:00:00Z`);
    const { rows } = await h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM transit_history WHERE issuer_id = $1', [attacker]);
    expect(rows[0].n).toBe(0);
    expect(await windowsOfAnotherIssuer()).toEqual(before);
  }, 600_000);
});
