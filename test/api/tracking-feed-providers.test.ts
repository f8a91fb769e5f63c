// Each provider's recorded-shape webhook body (test/fixtures/tracking-feeds/, ≥ 50 checkpoints over
// several days, out of order, one sent twice, times with and without offsets) posted to a feed's
// inbound URL, signed as the provider signs it (docs/tracking-feeds.md): the card ends in the
// fixture's status and exception reason, each change fires exactly one webhook event to a real
// local receiver, and the same body again changes nothing and fires nothing (each checkpoint that is
// not `ignored` is a `duplicate`). Also: a checkpoint logged but never signalled (a crash between the
// two) still reaches the workflow when the body is sent again; and each body with its history sent
// ten times over (≥ 500 checkpoints) is taken whole and fires what one copy fires.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { FEED_PROVIDER_MODULES, resolveCheckpointTime } from '../../domain/tracking-feeds/index.js';
import { FIXTURE_FACTS, FIXTURES, fixtureBody, fixtureText, signFixture, type FixtureName } from '../fixtures/tracking-feeds/load.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, request } from './http.js';

let h: Harness;
let receiver: Receiver;
let key: string;
const SECRET = 'whsec-provider-fixtures-0123456789';

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  const issuerId = await h.createIssuer('Tracking Feed Providers Issuer');
  key = (await h.createKey(issuerId)).key;
  const created = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated', 'delivery.exception'] });
  if (!created.ok) throw new Error(created.reason);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

interface Prepared {
  id: string;
  raw: string;
  post: () => ReturnType<typeof request>;
}

/** A feed of the fixture's provider, a dispatch registered from the body's first checkpoint, and the body ready to send. */
async function prepare(name: FixtureName, edit?: (body: any) => void): Promise<Prepared> {
  const facts = FIXTURE_FACTS[name];
  const feedBody = facts.provider === 'shippo' ? { provider: 'shippo' } : { provider: facts.provider, secret: SECRET };
  const feedRes = await request(h.baseUrl, '/v1/tracking_feeds', { headers: bearer(key), body: feedBody });
  expect(feedRes.status).toBe(201);
  const secret = facts.provider === 'shippo' ? new URL(feedRes.body.url).searchParams.get('token')! : SECRET;
  const id = randomUUID();
  const trackingNumber = `T${name.replace(/\W/g, '').toUpperCase()}${Math.floor(Math.random() * 1e10)}`;
  let raw = fixtureText(name, { trackingNumber, reference: randomUUID(), endBefore: new Date() });
  const parsed = FEED_PROVIDER_MODULES[facts.provider].parse(JSON.parse(raw));
  if (!parsed.ok) throw new Error(`${parsed.field}: ${parsed.message}`);
  const first = Math.min(
    ...parsed.trackings[0].checkpoints.map((c) => Date.parse(resolveCheckpointTime(c.time!, facts.destinationCountry))),
  );
  const registered = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: {
      id,
      tracking_number: trackingNumber,
      dispatch_date: `${new Date(first).toISOString().slice(0, 10)}T00:00:00Z`,
      destination: { postal_code: '10115', country_code: facts.destinationCountry },
    },
  });
  expect(registered.status).toBe(201);
  if (edit) {
    const body = JSON.parse(raw);
    edit(body);
    raw = JSON.stringify(body);
  }
  const signed = signFixture(facts.provider, raw, secret);
  const query = new URLSearchParams(signed.query).toString();
  const post = () =>
    request(h.baseUrl, `/v1/inbound/${feedRes.body.id}${query ? `?${query}` : ''}`, {
      headers: { 'content-type': 'application/json', ...signed.headers },
      body: raw,
    });
  return { id, raw, post };
}

const effectsOf = async (id: string) =>
  (await h.pool.query<{ effect: string | null; status: string }>('SELECT effect, status FROM carrier_events WHERE dispatch_id = $1', [id])).rows; // prettier-ignore
const webhooksOf = (id: string) =>
  receiver.requests
    .map((r) => ({ eventId: r.headers['x-service-event-id'] as string, body: JSON.parse(r.body.toString('utf8')) }))
    .filter((r) => r.body.data?.id === id);

describe.each(FIXTURES)('the %s fixture posted to its feed', (name) => {
  const facts = FIXTURE_FACTS[name];

  it(`ends ${facts.finalStatus}${facts.finalReason ? ` (${facts.finalReason})` : ''}, each change one webhook, and the same body again fires nothing`, async () => {
    const { id, post } = await prepare(name);
    const first = await post();
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      received: facts.entries,
      applied: facts.distinct - facts.ignored,
      duplicate: facts.entries - facts.distinct,
      unmatched: 0,
      ignored: facts.ignored,
    });

    // Every carrier event folded: the card's status and reason are the fixture's.
    const effects = await until(async () => {
      const rows = await effectsOf(id);
      return rows.length === facts.distinct - facts.ignored && rows.every((r) => r.effect !== null) ? rows : undefined;
    }, 'every carrier event folded');
    const { rows } = await h.pool.query('SELECT status, exception_reason FROM dispatches WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ status: facts.finalStatus, exception_reason: facts.finalReason ?? null });

    // One webhook event per change: status.updated per change of status, delivery.exception per
    // change into or within an exception; each sent once (the receiver answers 200).
    const applied = effects.filter((e) => e.effect === 'applied');
    const repeated = effects.filter((e) => e.effect === 'exception_repeated');
    expect(applied.length + repeated.length).toBe(facts.changes.bodyOrder);
    const expectedEvents = applied.length + applied.filter((e) => e.status === 'exception').length + repeated.length;
    const received = await until(
      () => (webhooksOf(id).length >= expectedEvents ? webhooksOf(id) : undefined),
      'every webhook of the changes',
    );
    expect(received.filter((r) => r.body.event === 'status.updated')).toHaveLength(applied.length);
    expect(new Set(received.map((r) => r.eventId)).size).toBe(received.length);
    expect(received).toHaveLength(expectedEvents);

    const again = await post();
    expect(again.body).toEqual({ received: facts.entries, applied: 0, duplicate: facts.entries - facts.ignored, unmatched: 0, ignored: facts.ignored }); // prettier-ignore
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(webhooksOf(id)).toHaveLength(expectedEvents);
    expect(await effectsOf(id)).toHaveLength(effects.length);
  }, 90_000);
});

/** Where each provider's body holds its checkpoints. */
const CHECKPOINTS: Record<FixtureName, (body: any) => unknown[]> = {
  easypost: (b) => b.result.tracking_details,
  aftership: (b) => b.msg.checkpoints,
  'aftership-v4': (b) => b.msg.checkpoints,
  shippo: (b) => b.data.tracking_history,
  ship24: (b) => b.trackings[0].events,
};

describe.each(FIXTURES)('the %s fixture with its history sent ten times over in one body (≥ 500 checkpoints)', (name) => {
  it('takes it in one request, applies each checkpoint once, and fires the webhooks of a single copy', async () => {
    const facts = FIXTURE_FACTS[name];
    const { id, post } = await prepare(name, (body) => {
      const checkpoints = CHECKPOINTS[name](body);
      const once = checkpoints.map((c) => structuredClone(c));
      for (let copy = 1; copy < 10; copy++) checkpoints.push(...once.map((c) => structuredClone(c)));
    });
    const res = await post();
    expect(res.status).toBe(200);
    expect(res.body.received).toBe(10 * facts.entries);
    expect(res.body.received).toBeGreaterThanOrEqual(500);
    expect(res.body).toMatchObject({ applied: facts.distinct - facts.ignored, unmatched: 0 });
    expect(res.body.applied + res.body.duplicate + res.body.ignored).toBe(res.body.received);
    await until(async () => {
      const { rows } = await h.pool.query('SELECT status, exception_reason FROM dispatches WHERE id = $1', [id]);
      return rows[0].status === facts.finalStatus && rows[0].exception_reason === (facts.finalReason ?? null);
    }, `the card ${facts.finalStatus}`);
    const effects = await until(async () => {
      const rows = await effectsOf(id);
      return rows.length === facts.distinct - facts.ignored && rows.every((r) => r.effect !== null) ? rows : undefined;
    }, 'every carrier event folded');
    const changes = effects.filter((e) => e.effect === 'applied').length;
    const statusUpdates = () => webhooksOf(id).filter((r) => r.body.event === 'status.updated');
    await until(() => statusUpdates().length >= changes, 'a status.updated per change');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(statusUpdates()).toHaveLength(changes);
  }, 90_000);
});

/**
 * Fields the provider's published types make optional (AfterShip Checkpoint `checkpoint_time?`,
 * `tag?`; Shippo TrackingStatus `statusDate?`; Ship24 event `occurrenceDatetime?`,
 * `statusMilestone?`), removed from one checkpoint each.
 */
const OPTIONAL_FIELDS: Partial<Record<FixtureName, Array<(body: any, i: number) => void>>> = {
  aftership: [(b, i) => delete b.msg.checkpoints[i].checkpoint_time, (b, i) => (b.msg.checkpoints[i].tag = null)],
  'aftership-v4': [(b, i) => delete b.msg.checkpoints[i].checkpoint_time, (b, i) => delete b.msg.checkpoints[i].tag],
  shippo: [(b, i) => (b.data.tracking_history[i].status_date = null)],
  ship24: [(b, i) => delete b.trackings[0].events[i].occurrenceDatetime, (b, i) => delete b.trackings[0].events[i].statusMilestone],
};

describe.each(Object.keys(OPTIONAL_FIELDS) as FixtureName[])(
  'the %s fixture with a checkpoint that lacks an optional time or status',
  (name) => {
    it('ignores that checkpoint and takes the others: a 400 would refuse every later webhook, which resends it', async () => {
      const facts = FIXTURE_FACTS[name];
      const removals = OPTIONAL_FIELDS[name]!;
      // Checkpoints the fixture maps and sends once, one per removal.
      const parsed = FEED_PROVIDER_MODULES[facts.provider].parse(fixtureBody(name));
      if (!parsed.ok) throw new Error(parsed.message);
      const checkpoints = parsed.trackings[0].checkpoints;
      const once = checkpoints
        .map((c, i) => ({ c, i }))
        .filter(({ c }) => c.mapped !== null && checkpoints.filter((o) => o.eventId === c.eventId).length === 1)
        .map(({ i }) => i);
      const { post } = await prepare(name, (body) => removals.forEach((remove, k) => remove(body, once[k])));
      const res = await post();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ received: facts.entries, unmatched: 0, ignored: facts.ignored + removals.length });
    }, 60_000);
  },
);

describe('a checkpoint logged but never signalled', () => {
  it('reaches the workflow when the provider sends the body again', async () => {
    const { id, raw, post } = await prepare('easypost');
    const parsed = FEED_PROVIDER_MODULES.easypost.parse(JSON.parse(raw));
    if (!parsed.ok) throw new Error(parsed.message);
    // As if the API had died between the log insert and the signal: the row is there, no effect.
    const latest = parsed.trackings[0].checkpoints
      .filter((c) => c.mapped?.status === 'delivered')
      .map((c) => ({ c, at: resolveCheckpointTime(c.time!, 'US') }))[0];
    await h.pool.query(`INSERT INTO carrier_events (dispatch_id, dedupe_key, event_id, status, occurred_at) VALUES ($1, $2, $3, 'delivered', $4)`, [id, `id:${latest.c.eventId}`, latest.c.eventId, latest.at]); // prettier-ignore
    expect((await post()).status).toBe(200);
    await until(async () => {
      const { rows } = await h.pool.query('SELECT status FROM dispatches WHERE id = $1', [id]);
      return rows[0].status === 'delivered';
    }, 'the card delivered by the checkpoint logged earlier');
  }, 60_000);
});
