// db/retention.ts findDispatchesDue, the retention sweep's walk over resting dispatches, one batch at a
// time: its statement must be served by dispatches_resting_updated_idx in the index's order, the
// window an index bound. Sorting every resting dispatch per batch instead (ORDER BY naming the
// to_char output, not the column) took a parallel sequential scan of the whole table each batch in
// bench/retention, the statement that cost live status reads the most (bench/retention/probe.ts).
// The plan is read with sequential scans disabled, so a tiny test table cannot hide the sort.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool, type Pool, type PoolClient } from '../../db/pool.js';
import { findDispatchesDue } from '../../db/retention.js';
import { requireTestEnv } from '../support/env.js';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

let pool: Pool;
const DAY = 86_400_000;

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 1, applicationName: 'test-retention-due-plan' });
});

afterAll(async () => {
  await pool?.end();
});

/** The plan of the statement that findDispatchesDue sends (it is explained instead of run). */
async function planOf(after?: { updatedAt: string; id: string }): Promise<PlanNode[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_seqscan = off');
    let plan: PlanNode | undefined;
    const explaining = {
      async query(sql: string, values: unknown[]) {
        const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${sql}`, values);
        plan = rows[0]['QUERY PLAN'][0].Plan;
        return { rows: [] };
      },
    } as unknown as Pool;
    await findDispatchesDue(explaining, { windowMs: 180 * DAY, deliveredRetentionMs: 7 * DAY, exceptionRetentionMs: 30 * DAY, limit: 200, after }); // prettier-ignore
    await client.query('ROLLBACK');
    const nodes: PlanNode[] = [];
    const walk = (node: PlanNode) => {
      nodes.push(node);
      node.Plans?.forEach(walk);
    };
    walk(plan!);
    return nodes;
  } finally {
    client.release();
  }
}

describe('the retention walk over resting dispatches', () => {
  it.each([
    ['the first batch', undefined],
    ['a batch after a cursor', { updatedAt: '2026-01-05T10:00:00.000000Z', id: '00000000-0000-4000-8000-000000000001' }],
  ])('%s reads dispatches_resting_updated_idx in its order, the window an index bound, and sorts nothing', async (_name, after) => {
    const nodes = await planOf(after);
    expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
    const scan = nodes.find((n) => n['Index Name'] === 'dispatches_resting_updated_idx');
    expect(scan?.['Node Type']).toBe('Index Scan');
    expect(scan?.['Index Cond']).toMatch(/updated_at < /);
  });
});

describe('which resting dispatches are due', () => {
  /** A delivered dispatch whose last change was `changedDaysAgo`, with one carrier event received `eventDaysAgo`. */
  async function resting(db: PoolClient, issuer: string, changedDaysAgo: number, eventDaysAgo: number): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, registration,
                               window_min, window_max, confidence_level, record, updated_at)
       VALUES ($1, $2, 'live', 3, 'delivered', now(), '75011', 'FR', '{}', '2024-01-02', '2024-01-05', 'Low', '{}', now() - make_interval(days => $3))`,
      [id, issuer, changedDaysAgo],
    );
    await db.query(
      `INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at, received_at)
       VALUES ($1, 'late', 'delivered', now() - make_interval(days => $2), now() - make_interval(days => $2))`,
      [id, eventDaysAgo],
    );
    return id;
  }

  it('counts the window from the last carrier event: a card that got one after its last change (a late scan after delivery) waits', async () => {
    // In a transaction rolled back: no other test's retention sweep sees these rows.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO issuers (id, name) VALUES ($1, 'Retention Due Issuer') RETURNING id`,
        [`iss_due_${randomUUID().slice(0, 8)}`],
      );
      const issuer = rows[0]!.id;
      // Changed 1,000 days ago (before any other test's dispatch, so first in the walk); the window is 100 days.
      const quiet = await resting(client, issuer, 1000, 1000);
      const scannedLately = await resting(client, issuer, 1000, 10);
      const { ids } = await findDispatchesDue(client, { windowMs: 100 * DAY, deliveredRetentionMs: DAY, exceptionRetentionMs: DAY, limit: 200 }); // prettier-ignore
      expect(ids).toContain(quiet);
      expect(ids).not.toContain(scannedLately);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
