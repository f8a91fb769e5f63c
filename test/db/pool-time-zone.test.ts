// Dates in SQL are UTC dates whatever the server's time zone: the domain counts days in UTC
// (domain/calendar.ts utcDateOf), and statements such as the retention window's `(now() - …)::date`
// or the prompt-report rule's `interval '1 day'` take the session's zone. A managed Postgres set to
// Europe/Paris would otherwise date a delivery at 23:30 UTC on the next day and count a day across a
// change of clocks as 23 or 25 hours. A scratch database with that default shows the pool overriding it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createPool } from '../../db/pool.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

const DATE_AND_DAY = `SELECT current_setting('TimeZone') AS zone,
       (timestamptz '2026-03-28 23:30:00+00')::date::text AS date,
       (extract(epoch FROM (timestamptz '2026-03-29 00:00:00+00' + interval '1 day') - timestamptz '2026-03-29 00:00:00+00') / 3600)::int AS hours`;

let database: ScratchDatabase;

beforeAll(async () => {
  database = await createScratchDatabase('tz', {
    setup: (admin, name) => admin.query(`ALTER DATABASE ${name} SET timezone TO 'Europe/Paris'`),
  });
});

afterAll(async () => {
  await database?.drop();
});

describe("the pool's sessions", () => {
  it('take the database default of Europe/Paris when connected without it (the setting is in force)', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(DATE_AND_DAY);
      expect(rows[0]).toEqual({ zone: 'Europe/Paris', date: '2026-03-29', hours: 23 });
    } finally {
      await client.end();
    }
  });

  it('date a moment and count a day in UTC whatever the database default', async () => {
    const pool = createPool(database.url, { max: 1 });
    try {
      const { rows } = await pool.query(DATE_AND_DAY);
      expect(rows[0]).toEqual({ zone: 'UTC', date: '2026-03-28', hours: 24 });
    } finally {
      await pool.end();
    }
  });
});
