// Every list an issuer or an operator pages through, at 100× the fixtures' size: a scratch database
// seeded with 10⁵ rows a table (one INSERT … SELECT generate_series each, then ANALYZE), so that the
// planner chooses as it would for a real issuer. Each read's statement, as its db/ function sends it,
// is explained (not run) for its first page and for a deep page: the plan must read the big table
// through an index that serves the list's filter and order (an Index Scan naming it, no Seq Scan,
// no Sort). Then the pages themselves: a walk through a list while rows are inserted between pages
// returns every row that was there once, in the list's order, none twice.
// No timings are asserted: the machine is shared.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { listDispatches } from '../../db/dispatches.js';
import { pageCarrierEvents } from '../../db/carrier-events.js';
import { listAttempts } from '../../db/delivery-log.js';
import { listDeliveries } from '../../db/delivery-summaries.js';
import { pageIgnored, pageUnmatched } from '../../db/feed-checkpoints.js';
import { createPool, type Pool } from '../../db/pool.js';
import { loadRegistrationOutcomes } from '../../db/predictions.js';
import { pageTrackingLinks } from '../../db/tracking-links.js';
import { findWebhookEvent, pageWebhookEvents } from '../../db/webhook-event-reads.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

const N = 100_000;
/** The big issuer's dispatch with a few hundred carrier events and tracking links. */
const BUSY = `md5('d' || 77777)::uuid`;
// Seeded relative to a fixed instant before now, so that rows inserted during a walk are newer.
const T0 = `(now() - interval '1 hour')`;
/** The seeded rows' calendar dates: any fixed day will do, none of the plans depends on it. */
const D0 = `DATE '2026-11-02'`;

// prettier-ignore
const SEED = [
  `INSERT INTO issuers (id, name) VALUES ('iss_big', 'Big'), ('iss_small', 'Small')`,
  // 10⁵ dispatches of one issuer, 90% live; statuses and 15 countries skewed as a real book is;
  // created every 5 minutes, and the small issuer's 600 in bunches of 20 sharing a created_at.
  `INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, registration, window_min, window_max, confidence_level, record, created_at)
   SELECT md5('d' || i)::uuid, 'iss_big', CASE WHEN i % 10 = 0 THEN 'test' ELSE 'live' END, 1,
          CASE WHEN i % 100 < 80 THEN 'delivered' WHEN i % 100 < 90 THEN 'in_transit' WHEN i % 100 < 95 THEN 'dispatched' WHEN i % 100 < 98 THEN 'out_for_delivery' ELSE 'exception' END,
          ${T0} - (i % 365) * interval '1 day', '75001',
          (ARRAY['FR','DE','ES','IT','NL','BE','PL','PT','SE','AT','IE','DK','FI','CZ','LT'])[1 + (i * 7) % 15]::bpchar,
          '{}', ${D0}, ${D0} + 3, 'High', '{}', ${T0} - i * interval '5 minutes'
     FROM generate_series(1, ${N}) i`,
  `INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, registration, window_min, window_max, confidence_level, record, created_at)
   SELECT md5('s' || i)::uuid, 'iss_small', 'live', 1, CASE WHEN i % 3 = 0 THEN 'exception' ELSE 'in_transit' END, ${T0}, '75001',
          CASE WHEN i % 2 = 0 THEN 'FR' ELSE 'DE' END, '{}', ${D0}, ${D0} + 3, 'High', '{}', ${T0} - (i / 20) * interval '1 minute'
     FROM generate_series(1, 600) i`,
  // Erasures of other dispatches (they outlive them), and of some of the small issuer's.
  `INSERT INTO erasures (id, dispatch_id, issuer_id, mode) SELECT 'era_' || i, md5('x' || i)::uuid, 'iss_big', 'live' FROM generate_series(1, 10000) i`,
  `INSERT INTO erasures (id, dispatch_id, issuer_id, mode) SELECT 'era_s' || i, md5('s' || i)::uuid, 'iss_small', 'live' FROM generate_series(7, 600, 50) i`,
  `INSERT INTO webhook_endpoints (id, issuer_id, url, events, secret)
   SELECT 'whe_' || i, 'iss_big', 'https://example.test/', ARRAY['status.updated'], 's' FROM generate_series(0, 20) i`,
  // 10⁵ events, each delivered and attempted once: half to whe_0, one in twenty to each of whe_2, whe_4
  // … whe_20 (less one in a hundred of whe_4's, whe_1's).
  `INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body, created_at)
   SELECT 'evt_' || lpad(i::text, 24, '0'), md5('d' || (i % 20000 + 1))::uuid, 'iss_big', 'live',
          CASE WHEN i % 100 < 60 THEN 'status.updated' WHEN i % 100 < 90 THEN 'delivery.predicted' WHEN i % 100 < 98 THEN 'delivery.completed' ELSE 'delivery.exception' END,
          ${T0}, '\\x7b7d'::bytea, ${T0} - i * interval '1 minute'
     FROM generate_series(1, ${N}) i`,
  `INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, created_at)
   SELECT 'evt_' || lpad(i::text, 24, '0'), CASE WHEN i % 100 = 3 THEN 'whe_1' ELSE 'whe_' || (i % 2) * (1 + i % 20) END, CASE WHEN i % 100 = 0 THEN 'undeliverable' WHEN i % 100 = 1 THEN 'pending' ELSE 'delivered' END,
          1, ${T0} - (i / 2) * interval '1 minute'
     FROM generate_series(1, ${N}) i`,
  `INSERT INTO delivery_attempts (event_id, endpoint_id, attempt, started_at, duration_ms, state_after)
   SELECT 'evt_' || lpad(i::text, 24, '0'), CASE WHEN i % 100 = 3 THEN 'whe_1' ELSE 'whe_' || (i % 2) * (1 + i % 20) END, 1, ${T0} - (i / 2) * interval '1 minute', 20,
          CASE WHEN i % 100 = 0 THEN 'undeliverable' WHEN i % 100 = 1 THEN 'pending' ELSE 'delivered' END
     FROM generate_series(${N}, 1, -1) i`,
  // 10⁵ carrier events over 20 000 dispatches, and 300 of the busy one, three received at each instant.
  `INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at, received_at)
   SELECT md5('d' || (i % 20000 + 1))::uuid, 'k' || i, 'in_transit', ${T0} - i * interval '1 minute', ${T0} - i * interval '1 minute'
     FROM generate_series(1, ${N}) i`,
  `INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at, received_at)
   SELECT ${BUSY}, 'busy' || i, 'in_transit', ${T0} - i * interval '1 minute', ${T0} - (i / 3) * interval '1 minute'
     FROM generate_series(1, 300) i`,
  `INSERT INTO tracking_feeds (id, issuer_id, mode, provider, secret) SELECT 'tf_' || i, 'iss_big', 'live', 'shippo', 's' FROM generate_series(0, 4) i`,
  // 5 × 10⁴ kept checkpoints a list, four received at each instant: 2% of tf_1, most of tf_0.
  `INSERT INTO feed_unmatched_checkpoints (feed_id, issuer_id, mode, tracking_number, event_id, status, time, original, received_at)
   SELECT CASE WHEN i % 50 = 0 THEN 'tf_1' WHEN i % 10 = 0 THEN 'tf_' || 2 + i % 3 ELSE 'tf_0' END, 'iss_big', 'live', 'TN' || (i % 5000), 'e' || i, 'in_transit', '{}', '{}', ${T0} - (i / 4) * interval '1 minute'
     FROM generate_series(1, ${N / 2}) i`,
  `INSERT INTO feed_ignored_checkpoints (feed_id, issuer_id, mode, tracking_number, event_id, status, reason, message, received_at)
   SELECT CASE WHEN i % 50 = 0 THEN 'tf_1' WHEN i % 10 = 0 THEN 'tf_' || 2 + i % 3 ELSE 'tf_0' END, 'iss_big', 'live', 'TN' || (i % 5000), 'e' || i, 'in_transit', 'no_time', 'no time', ${T0} - (i / 4) * interval '1 minute'
     FROM generate_series(1, ${N / 2}) i`,
  // 5 × 10⁴ tracking links, 200 of the busy dispatch, two created at each instant.
  `INSERT INTO tracking_links (id, dispatch_id, issuer_id, mode, token_hash, expires_at, created_at)
   SELECT 'tl_' || lpad(i::text, 24, '0'), md5('d' || CASE WHEN i <= 200 THEN 77777 ELSE i END)::uuid, 'iss_big', 'live', decode(md5('t' || i), 'hex'),
          now() + interval '30 days', ${T0} - (i / 2) * interval '1 minute'
     FROM generate_series(1, ${N / 2}) i`,
  `INSERT INTO prediction_outcomes (issuer_id, mode, country_code, dispatch_date, confidence_level, window_min, window_max, delivered_date, learned)
   SELECT CASE WHEN i % 50 = 0 THEN 'iss_small' ELSE 'iss_big' END, 'live', 'FR', ${D0} - (i % 365), 'High', ${D0}, ${D0}, ${D0}, true
     FROM generate_series(1, ${N}) i`,
  'ANALYZE',
];

let scratch: ScratchDatabase;
let pool: Pool;
let busy: string;

beforeAll(async () => {
  scratch = await createScratchDatabase('list_plans', { migrate: true });
  pool = createPool(scratch.url, { max: 2, applicationName: 'test-list-plans' });
  for (const statement of SEED) await pool.query(statement);
  busy = (await pool.query<{ id: string }>(`SELECT ${BUSY}::text AS id`)).rows[0].id;
}, 600_000);

afterAll(async () => {
  await pool?.end();
  await scratch?.drop();
});

/** The plans of every statement `read` sends, each explained instead of run (it sees no rows). */
async function plansOf(read: (db: Pool) => Promise<unknown>): Promise<PlanNode[][]> {
  const plans: PlanNode[][] = [];
  const explaining = {
    async query(statement: string | { text: string; values?: unknown[] }, values?: unknown[]) {
      const text = typeof statement === 'string' ? statement : statement.text;
      const { rows } = await pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (FORMAT JSON) ${text}`,
        typeof statement === 'string' ? values : statement.values,
      );
      const nodes: PlanNode[] = [];
      const walk = (node: PlanNode) => {
        nodes.push(node);
        node.Plans?.forEach(walk);
      };
      walk(rows[0]['QUERY PLAN'][0].Plan);
      plans.push(nodes);
      return { rows: [], rowCount: 0 };
    },
  } as unknown as Pool;
  await read(explaining);
  return plans;
}

/** The read's statement scans `index` (with an index condition unless `full`), sorts nothing and scans no table whole. */
async function expectServedBy(read: (db: Pool) => Promise<unknown>, index: string, condition?: RegExp) {
  const [nodes] = await plansOf(read);
  const summary = nodes.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}`); // prettier-ignore
  expect(summary.filter((line) => /Sort|Seq Scan/.test(line))).toEqual([]);
  const scan = nodes.find((n) => n['Index Name'] === index);
  expect({ index: scan?.['Index Name'], type: scan?.['Node Type'], plan: summary }).toMatchObject({ index, type: expect.stringMatching(/^Index (Only )?Scan$/) }); // prettier-ignore
  if (condition) expect(scan?.['Index Cond']).toMatch(condition);
}

/**
 * For a list that holds half or more of its table (the endpoint or feed of most rows): the planner
 * may walk a wider index in the list's order and check the filter on each row (about two rows read
 * per row listed); never a Seq Scan, never a Sort of the whole list (an Incremental Sort of the few
 * rows sharing an instant is not one).
 */
async function expectNoFullScanOrSort(read: (db: Pool) => Promise<unknown>) {
  const [nodes] = await plansOf(read);
  expect(nodes.map((n) => n['Node Type']).filter((type) => type === 'Seq Scan' || type === 'Sort')).toEqual([]);
}

/** An endpoint of one attempt and one delivery in a hundred: its log and list are read through its own index. */
const SMALL = 'whe_1';

it('the endpoint of one attempt in a hundred has its share of the seeded attempts and deliveries', async () => {
  const { rows } = await pool.query<{ attempts: number; deliveries: number }>(
    `SELECT (SELECT count(*) FROM delivery_attempts WHERE endpoint_id = $1)::int AS attempts,
            (SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1)::int AS deliveries`,
    [SMALL],
  );
  expect(rows[0]).toEqual({ attempts: N / 100, deliveries: N / 100 });
});

const DAY = 86_400_000;
/** A cursor deep in the big issuer's lists: about 300 days back. */
const deepAt = () => new Date(Date.now() - 300 * DAY).toISOString().replace('Z', '000Z');
const deepDispatch = () => ({ createdAt: deepAt(), id: 'ffffffff-ffff-4fff-8fff-ffffffffffff' });
const ROW_BOUND = /ROW\(/;

describe('GET /v1/dispatches and the dashboard’s dispatch search at 10⁵ dispatches', () => {
  const base = { issuerId: 'iss_big', mode: 'live' as const, limit: 50 };
  const lastYear = () => ({
    createdAfter: new Date(Date.now() - 365 * DAY).toISOString(),
    createdBefore: new Date(Date.now() - 30 * DAY).toISOString(),
  });
  it.each([
    ['no filter', 'dispatches_issuer_created_idx', {}],
    ['status', 'dispatches_issuer_status_created_idx', { status: 'exception' as const }],
    ['country_code', 'dispatches_issuer_country_created_idx', { countryCode: 'LT' }],
    ['created_after and created_before', 'dispatches_issuer_created_idx', 'range'],
    ['status and country_code', 'dispatches_issuer_status_country_created_idx', { status: 'exception' as const, countryCode: 'LT' }],
    ['every filter', 'dispatches_issuer_status_country_created_idx', 'all'],
  ] as const)('with %s read the first and a deep page through %s in its order', async (_name, index, filter) => {
    const extra =
      filter === 'range' ? lastYear() : filter === 'all' ? { ...lastYear(), status: 'exception' as const, countryCode: 'LT' } : filter;
    await expectServedBy((db) => listDispatches(db, { ...base, ...extra }), index);
    await expectServedBy((db) => listDispatches(db, { ...base, ...extra, after: deepDispatch() }), index, ROW_BOUND);
  });
});

describe('webhook events and deliveries at 10⁵ events, deliveries and attempts', () => {
  const deepEvent = () => ({ createdAt: deepAt(), id: 'evt_zzzzzzzzzzzzzzzzzzzzzzzz' });
  it.each([
    ['no filter', 'webhook_events_issuer_idx', {}],
    ['type', 'webhook_events_issuer_type_idx', { type: 'delivery.exception' as const }],
    ['since', 'webhook_events_issuer_idx', { since: new Date(Date.now() - 30 * DAY) }],
  ] as const)('GET /v1/events with %s reads the first and a deep page through %s in its order', async (_name, index, filter) => {
    const query = { issuerId: 'iss_big', mode: 'live' as const, limit: 50, ...filter };
    await expectServedBy((db) => pageWebhookEvents(db, query), index);
    await expectServedBy((db) => pageWebhookEvents(db, { ...query, after: deepEvent() }), index, ROW_BOUND);
  });

  it('GET /v1/events with dispatch_id reads only that dispatch’s events, through webhook_events_dispatch_idx', async () => {
    const [nodes] = await plansOf((db) => pageWebhookEvents(db, { issuerId: 'iss_big', mode: 'live', dispatchId: busy, limit: 50 }));
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    expect(nodes.find((n) => n['Index Name'] === 'webhook_events_dispatch_idx')?.['Index Cond']).toMatch(/dispatch_id = /);
  });

  it('GET /v1/events/{id} reads the event by its key', async () => {
    await expectServedBy((db) => findWebhookEvent(db, 'iss_big', 'live', 'evt_000000000000000000000042'), 'webhook_events_pkey');
  });

  it('the dashboard’s delivery log reads the first and a deep page of an endpoint’s attempts through delivery_attempts_endpoint_idx', async () => {
    await expectServedBy((db) => listAttempts(db, SMALL, { limit: 50 }), 'delivery_attempts_endpoint_idx');
    await expectServedBy((db) => listAttempts(db, SMALL, { limit: 50, before: 20_000 }), 'delivery_attempts_endpoint_idx', /id < /);
    // The endpoints of half and of one in twenty of the attempts: the primary key in the log's order may
    // serve them, the endpoint checked on each; never a Sort of the endpoint's whole log.
    for (const endpoint of ['whe_0', 'whe_2']) {
      await expectNoFullScanOrSort((db) => listAttempts(db, endpoint, { limit: 50 }));
      await expectNoFullScanOrSort((db) => listAttempts(db, endpoint, { limit: 50, before: 20_000 }));
    }
  });

  it.each([
    ['an event type', { eventType: 'delivery.exception' as const }],
    ['an outcome', { outcome: 'undeliverable' as const }],
    ['pending', { outcome: 'pending' as const }],
  ] as const)('the dashboard’s delivery log filtered by %s scans no table whole', async (_name, filter) => {
    for (const endpoint of ['whe_0', SMALL]) {
      const [nodes] = await plansOf((db) => listAttempts(db, endpoint, { limit: 50, before: 20_000, ...filter }));
      expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    }
  });

  it.each([
    ['no filter', 'webhook_deliveries_created_idx', {}],
    ['--endpoint', 'webhook_deliveries_endpoint_created_idx', { endpointId: SMALL }],
    ['--undeliverable', 'webhook_deliveries_undeliverable_created_idx', { undeliverable: true }],
  ] as const)('`deliveries list` with %s reads the newest through %s', async (_name, index, filter) => {
    await expectServedBy((db) => listDeliveries(db, { ...filter, limit: 101 }), index);
    await expectNoFullScanOrSort((db) => listDeliveries(db, { endpointId: 'whe_0', limit: 101 }));
  });
});

describe('a dispatch’s carrier events and tracking links, a feed’s kept checkpoints', () => {
  it('GET /v1/dispatches/{id}/events reads the first and a later page through carrier_events_dispatch_received_idx in arrival order', async () => {
    await expectServedBy((db) => pageCarrierEvents(db, busy, { limit: 50 }), 'carrier_events_dispatch_received_idx');
    const after = { receivedAt: new Date(Date.now() - 2 * 3_600_000).toISOString().replace('Z', '000Z'), dedupeKey: 'busy150' };
    await expectServedBy((db) => pageCarrierEvents(db, busy, { limit: 50, after }), 'carrier_events_dispatch_received_idx', ROW_BOUND);
  });

  it('GET /v1/dispatches/{id}/tracking_links reads the first and a later page through tracking_links_dispatch_idx', async () => {
    await expectServedBy((db) => pageTrackingLinks(db, busy, { limit: 50 }), 'tracking_links_dispatch_idx');
    const after = { createdAt: deepAt(), id: 'tl_zzzzzzzzzzzzzzzzzzzzzzzz' };
    await expectServedBy((db) => pageTrackingLinks(db, busy, { limit: 50, after }), 'tracking_links_dispatch_idx', ROW_BOUND);
  });

  it.each([
    ['unmatched', 'feed_unmatched_page_idx'],
    ['ignored', 'feed_ignored_page_idx'],
  ] as const)('a feed’s %s list reads the first and a deep page through %s in its order', async (list, index) => {
    const page = list === 'unmatched' ? pageUnmatched : pageIgnored;
    await expectServedBy((db) => page(db, 'tf_1', { limit: 50 }), index);
    const after = { receivedAt: new Date(Date.now() - 5 * DAY).toISOString().replace('Z', '000Z'), trackingNumber: 'TN5', eventId: 'e5' };
    await expectServedBy((db) => page(db, 'tf_1', { limit: 50, after }), index, ROW_BOUND);
    // The feed of most rows: the ignored list's received_at index (the retention sweep's) may serve it.
    await expectNoFullScanOrSort((db) => page(db, 'tf_0', { limit: 50 }));
    await expectNoFullScanOrSort((db) => page(db, 'tf_0', { limit: 50, after }));
  });
});

describe('prediction quality at 10⁵ outcomes', () => {
  it('the dashboard’s, of one issuer, reads that issuer’s outcomes through prediction_outcomes_issuer_idx', async () => {
    const [nodes] = await plansOf((db) => loadRegistrationOutcomes(db, { issuerId: 'iss_small' }));
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    expect(nodes.some((n) => n['Index Name'] === 'prediction_outcomes_issuer_idx')).toBe(true);
  });
});

describe('a walk through a list while rows are inserted between its pages', () => {
  /** Pages until the end, running `insert` after each page; the keys in the order listed. */
  async function walk<C>(page: (after?: C) => Promise<{ keys: string[]; next?: C }>, insert: (n: number) => Promise<unknown>) {
    const keys: string[] = [];
    let after: C | undefined;
    for (let n = 0; ; n += 1) {
      const result = await page(after);
      keys.push(...result.keys);
      if (!result.next) return keys;
      await insert(n);
      after = result.next;
    }
  }
  const expectOnceEach = (listed: string[], before: string[]) => {
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.filter((key) => before.includes(key))).toEqual(before);
  };

  it('GET /v1/dispatches with a status lists each dispatch there before it once, in order, however many share a created_at', async () => {
    const filter = { issuerId: 'iss_small', mode: 'live' as const, status: 'in_transit' as const, limit: 7 };
    const all = async () => (await listDispatches(pool, { ...filter, limit: 1000 })).items.map((i) => i.id);
    const before = await all();
    expect(before.length).toBeGreaterThan(300);
    const listed = await walk(
      async (after?: { createdAt: string; id: string }) => {
        const { items, next } = await listDispatches(pool, { ...filter, after });
        return { keys: items.map((i) => i.id), next };
      },
      (n) =>
        pool.query(
          `INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, registration, window_min, window_max, confidence_level, record)
           VALUES (md5('new' || $1)::uuid, 'iss_small', 'live', 1, 'in_transit', now(), '75001', 'FR', '{}', ${D0}, ${D0}, 'High', '{}')`,
          [n],
        ),
    );
    expectOnceEach(listed, before);
  });

  it('GET /v1/dispatches/{id}/events lists each event there before it once, in arrival order', async () => {
    const before = (await pageCarrierEvents(pool, busy, { limit: 1000 })).items.map((i) => i.id);
    const listed = await walk(
      async (after?: { receivedAt: string; dedupeKey: string }) => {
        const { items, next } = await pageCarrierEvents(pool, busy, { limit: 13, after });
        return { keys: items.map((i) => i.id), next };
      },
      (n) =>
        pool.query(
          `INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at) VALUES ($1, 'later' || $2, 'in_transit', now())`,
          [busy, n],
        ),
    );
    expectOnceEach(listed, before);
  });

  it('a feed’s unmatched list lists each checkpoint there before it once, newest first', async () => {
    const key = (i: { trackingNumber: string; eventId: string }) => `${i.trackingNumber}/${i.eventId}`;
    const before = (await pageUnmatched(pool, 'tf_1', { limit: 1000 })).items.map(key);
    const listed = await walk(
      async (after?: { receivedAt: string; trackingNumber: string; eventId: string }) => {
        const { items, next } = await pageUnmatched(pool, 'tf_1', { limit: 37, after });
        return { keys: items.map(key), next };
      },
      (n) =>
        pool.query(
          `INSERT INTO feed_unmatched_checkpoints (feed_id, issuer_id, mode, tracking_number, event_id, status, time, original)
           VALUES ('tf_1', 'iss_big', 'live', 'NEW', 'new' || $1, 'in_transit', '{}', '{}')`,
          [n],
        ),
    );
    expectOnceEach(listed, before);
  });

  it('a dispatch’s tracking links list each link there before it once, newest first', async () => {
    const before = (await pageTrackingLinks(pool, busy, { limit: 1000 })).items.map((i) => i.id);
    const listed = await walk(
      async (after?: { createdAt: string; id: string }) => {
        const { items, next } = await pageTrackingLinks(pool, busy, { limit: 9, after });
        return { keys: items.map((i) => i.id), next };
      },
      (n) =>
        pool.query(
          `INSERT INTO tracking_links (id, dispatch_id, issuer_id, mode, token_hash, expires_at)
           VALUES ('tl_new' || lpad($2::text, 18, '0'), $1, 'iss_big', 'live', decode(md5('new' || $2), 'hex'), now() + interval '1 day')`,
          [busy, n],
        ),
    );
    expectOnceEach(listed, before);
  });
});
