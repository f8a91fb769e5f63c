// Erasure covers every table that names a dispatch (docs/http-contract.md "Erasure"): the database's own
// catalogue (information_schema, pg_constraint) is read for every column that holds a dispatch id
// (by name: `…dispatch_id`, or `…dispatch_ids` for an array of them) and every foreign key into a
// table that erasure empties (dispatches, tracking_links, …), and each table found must be one that
// db/erasure.ts erases, unlinks or keeps as the tombstone. So a table added later by any migration
// cannot escape erasure: a fixture table with a `dispatch_id` column (and one with a foreign key to dispatches), created inside a
// transaction that is rolled back, is reported.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ERASED_TABLES, TOMBSTONE_TABLE, UNLINKED_TABLES } from '../../db/erasure.js';
import { createPool, type Pool, type PoolClient } from '../../db/pool.js';
import { requireTestEnv } from '../support/env.js';

const COVERED = new Set<string>([...Object.keys(ERASED_TABLES), ...Object.keys(UNLINKED_TABLES), ...Object.keys(TOMBSTONE_TABLE)]);

/** `table.column (why)` for every column naming a dispatch that erasure does not cover. */
async function uncovered(db: Pool | PoolClient, covered: ReadonlySet<string> = COVERED): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string; column_name: string; why: string }>(
    `SELECT c.table_name, c.column_name, 'holds a dispatch id' AS why
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
      WHERE c.table_schema = current_schema() AND (c.column_name LIKE '%dispatch\\_id' OR c.column_name LIKE '%dispatch\\_ids')
     UNION ALL
     SELECT cl.relname, a.attname, 'references ' || ref.relname
       FROM pg_constraint con
       JOIN pg_class cl ON cl.oid = con.conrelid
       JOIN pg_class ref ON ref.oid = con.confrelid
       JOIN pg_namespace n ON n.oid = cl.relnamespace
       JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = ANY (con.conkey)
      WHERE con.contype = 'f' AND n.nspname = current_schema() AND ref.relname = ANY ($1::text[])`,
    [Object.keys(ERASED_TABLES)],
  );
  return rows.filter((r) => !covered.has(r.table_name)).map((r) => `${r.table_name}.${r.column_name} (${r.why})`);
}

let pool: Pool;

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-erasure-catalogue' });
});

afterAll(async () => {
  await pool?.end();
});

describe('the erasure catalogue', () => {
  it('covers every column that holds a dispatch id and every table that references an erased table', async () => {
    expect(await uncovered(pool)).toEqual([]);
  });

  it('names only tables that exist', async () => {
    const { rows } = await pool.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ANY ($1::text[])`,
      [[...COVERED]],
    );
    expect(rows.map((r) => r.name).sort()).toEqual([...COVERED].sort());
  });

  it('finds the tables it must: the projection, its logs, webhook events, tracking links and their gate rows', async () => {
    // A check that found nothing would pass the first test: these are found by the catalogue query itself.
    const found = new Set((await uncovered(pool, new Set())).map((line) => line.split('.')[0]));
    expect([...found]).toEqual(
      expect.arrayContaining(['carrier_events', 'erasures', 'feed_ignored_checkpoints', 'idempotency_keys', 'prediction_log', 'tracking_gate_failures', 'tracking_gate_passes', 'tracking_links', 'transit_history', 'webhook_events']), // prettier-ignore
    );
  });

  it('reports a table added with a dispatch_id column, or a foreign key to dispatches, that erasure does not cover', async () => {
    const client = await pool.connect();
    try {
      // DDL is transactional: the fixture tables are seen by this transaction only, and rolled back.
      await client.query('BEGIN');
      await client.query('CREATE TABLE erasure_fixture_notes (dispatch_id uuid NOT NULL, note text)');
      await client.query('CREATE TABLE erasure_fixture_cards (card uuid REFERENCES dispatches (id))');
      expect(await uncovered(client)).toEqual(
        expect.arrayContaining([
          'erasure_fixture_notes.dispatch_id (holds a dispatch id)',
          'erasure_fixture_cards.card (references dispatches)',
        ]),
      );
      expect(await uncovered(client)).toHaveLength(2);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
