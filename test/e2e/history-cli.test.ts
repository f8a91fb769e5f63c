// `history import` and `conditions set|list|clear` as an operator runs them (a real `tsx
// cli/admin.ts` subprocess against the migrated test Postgres), and loadTransitStatistics reading
// back what was imported. Each test uses its own country so files never see each other's rows.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { recordServiceDelivery } from '../../db/transit-history.js';
import { loadTransitStatistics } from '../../db/transit-statistics.js';
import { createPool, type Pool } from '../../db/pool.js';
import { expectOneLineFailure, runCli as runCliProcess } from '../support/cli.js';
import { requireTestEnv } from '../support/env.js';
import { onOneUtcDay } from '../support/today.js';

let databaseUrl: string;
let pool: Pool;
const dir = mkdtempSync(path.join(tmpdir(), 'history-cli-'));

beforeAll(() => {
  databaseUrl = requireTestEnv('TEST_DATABASE_URL');
  pool = createPool(databaseUrl, { max: 2, applicationName: 'test-history-cli' });
});

afterAll(async () => {
  await pool?.end();
});

function runCli(args: string[], timeoutMs?: number) {
  return runCliProcess(args, { DATABASE_URL: databaseUrl }, timeoutMs);
}

function csv(name: string, lines: string[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/**
 * The country's imported rows, or one dispatch's own row: the database is shared with every other
 * test file, and any of them (the API fuzz test among them) may deliver a dispatch to this country.
 */
async function rowsFor(country: string, dispatchId?: string) {
  const { rows } = await pool.query<{ postal_code: string; postal_prefix: string; business_days: number; source: string }>(
    `SELECT postal_code, postal_prefix, business_days, source FROM transit_history
      WHERE country_code = $1 AND ($2::uuid IS NULL AND source = 'import' OR dispatch_id = $2::uuid) ORDER BY id`,
    [country, dispatchId ?? null],
  );
  return rows;
}

describe('history import', () => {
  it('imports every good row, counted in business days of the destination country', async () => {
    // Dispatched Friday 2026-12-18, delivered Tuesday 2026-12-29 in Belgium: Christmas (Fri 25) is a
    // public holiday, so the business days after Friday 18 are 21, 22, 23, 24, 28, 29 → 6.
    const file = csv('good.csv', ['postal_code,country_code,dispatch_date,delivered_date', '1000,BE,2026-12-18,2026-12-29', '1050,be,2026-12-21,2026-12-23']); // prettier-ignore
    const result = await runCli(['history', 'import', file, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ imported: 2, skipped: 0, errors: [] });
    expect(await rowsFor('BE')).toEqual([
      { postal_code: '1000', postal_prefix: '10', business_days: 6, source: 'import' },
      { postal_code: '1050', postal_prefix: '10', business_days: 2, source: 'import' },
    ]);
  });

  it('reports refused rows by line number and reason, imports the rest, and exits non-zero', async () => {
    const file = csv('bad.csv', [
      'postal_code,country_code,dispatch_date,delivered_date',
      '1010,AT,2026-03-02,2026-03-04',
      '1020,XX,2026-03-02,2026-03-04',
      '1030,AT,2026-02-30,2026-03-04',
      '1040,AT,2026-03-05,2026-03-04',
      '1050,AT,2026-03-02',
      ',AT,2026-03-02,2026-03-04',
      '1060,AT,2026-03-03,2026-03-05',
      '1070,AT,2026-03-02T10:00:00Z,2026-03-02T01:00:00+02:00',
      '1080,AT,2025-01-02,2026-03-04',
      '1090,AT,2026-03-02T25:00:00Z,2026-03-04',
    ]);
    const result = await runCli(['history', 'import', file, '--json']);
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout) as { imported: number; skipped: number; errors: Array<{ line: number; reason: string }> };
    expect(summary).toMatchObject({ imported: 2, skipped: 8 });
    expect(summary.errors.map((e) => e.line)).toEqual([3, 4, 5, 6, 7, 9, 10, 11]);
    expect(summary.errors[0].reason).toMatch(/unknown country_code "XX"/);
    expect(summary.errors[1].reason).toMatch(/dispatch_date "2026-02-30" is not an ISO 8601 date or timestamp/);
    expect(summary.errors[2].reason).toMatch(/delivered_date 2026-03-04 is before dispatch_date 2026-03-05/);
    expect(summary.errors[3].reason).toMatch(/missing delivered_date/);
    expect(summary.errors[4].reason).toMatch(/missing postal_code/);
    // A timestamp counts by its UTC date: 01:00 at +02:00 on 2 March is 23:00 UTC on 1 March.
    expect(summary.errors[5]).toEqual({ line: 9, reason: 'delivered_date 2026-03-01 is before dispatch_date 2026-03-02 (UTC dates)' });
    expect(summary.errors[6].reason).toMatch(/transit of 426 days is implausible \(more than 120\)/);
    expect(summary.errors[7].reason).toMatch(/dispatch_date "2026-03-02T25:00:00Z" is not an ISO 8601 date or timestamp/);
    for (const line of [3, 4, 5, 6, 7, 9, 10, 11]) expect(result.stderr).toMatch(new RegExp(`^line ${line}: .*skipped$`, 'm'));
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(
      // Importing the whole file again would add its valid rows a second time (imports have no key).
      'error: 8 rows refused (listed above by line number); the 2 valid rows were imported: import only the refused rows again once fixed (the whole file again would import the valid ones twice), or pass --allow-errors to accept a partial import',
    );
    expect((await rowsFor('AT')).map((r) => r.postal_code)).toEqual(['1010', '1060']);
  });

  it('refuses a row with a stray or unclosed quote on its own line, and imports every row after it', async () => {
    const file = csv('quotes.csv', [
      'postal_code,country_code,dispatch_date,delivered_date',
      '"101",IS,2026-03-02,2026-03-04',
      '"102,IS,2026-03-02,2026-03-04',
      '103,IS,2026-03-02,2026-03-04',
      '10"4,IS,2026-03-02,2026-03-04',
      '"10"5,IS,2026-03-02,2026-03-04',
      '"106",IS,"2026-03-02","2026-03-04"',
      '107,IS,2026-03-02,2026-03-04',
    ]);
    const result = await runCli(['history', 'import', file, '--json', '--allow-errors']);
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as { imported: number; skipped: number; errors: Array<{ line: number; reason: string }> };
    // Every data row is either imported or refused by its own line.
    expect(summary.errors.map((e) => e.line)).toEqual([3, 5, 6]);
    expect(summary).toMatchObject({ imported: 4, skipped: 3 });
    expect((await rowsFor('IS')).map((r) => r.postal_code)).toEqual(['101', '103', '106', '107']);
  });

  it('exits 0 with --allow-errors when rows were refused, still listing them', async () => {
    const file = csv('allow.csv', ['postal_code,country_code,dispatch_date,delivered_date', '11000,RS,2026-03-02,2026-03-04', '11000,RS,2026-03-05,2026-03-04']); // prettier-ignore
    const result = await runCli(['history', 'import', file, '--allow-errors', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ imported: 1, skipped: 1, errors: [{ line: 3 }] });
    expect(result.stderr).toMatch(/^line 3: .*skipped$/m);
  });

  it('imports ISO 8601 timestamps (the API’s format) in both date columns, each as its UTC calendar date', async () => {
    const file = csv('timestamps.csv', [
      'postal_code,country_code,dispatch_date,delivered_date',
      '111 22,SE,2026-03-02T09:15:00Z,2026-03-04T16:40:00Z',
      // 00:30 at +02:00 on Tuesday 3 March is Monday 2 March in UTC; 23:10 at -05:00 on Wednesday 4
      // is Thursday 5 in UTC: three business days.
      '111 22,SE,2026-03-03T00:30:00.123+02:00,2026-03-04T23:10:00-05:00',
      '111 22,SE,2026-03-02,2026-03-04T08:00:00.5+01:00',
    ]);
    const result = await runCli(['history', 'import', file, '--json']);
    expect(JSON.parse(result.stdout)).toEqual({ imported: 3, skipped: 0, errors: [] });
    expect(result.code).toBe(0);
    const { rows } = await pool.query<{ dispatch: string; delivered: string; business_days: number }>(
      "SELECT dispatch_date::text AS dispatch, delivered_date::text AS delivered, business_days FROM transit_history WHERE country_code = 'SE' ORDER BY id",
    );
    expect(rows).toEqual([
      { dispatch: '2026-03-02', delivered: '2026-03-04', business_days: 2 },
      { dispatch: '2026-03-02', delivered: '2026-03-05', business_days: 3 },
      { dispatch: '2026-03-02', delivered: '2026-03-04', business_days: 2 },
    ]);
  });

  it('imports every row of a 20,000-row file in timestamp format', async () => {
    const lines = ['postal_code,country_code,dispatch_date,delivered_date'];
    const start = Date.UTC(2025, 0, 6, 7, 45, 12, 345);
    for (let i = 0; i < 20_000; i += 1) {
      const dispatched = start + (i % 500) * 86_400_000 + (i % 7) * 3_600_000;
      const delivered = dispatched + (1 + (i % 5)) * 86_400_000;
      const offset = i % 2 === 0 ? 'Z' : '+02:00';
      const stamp = (ms: number) => (offset === 'Z' ? new Date(ms).toISOString() : `${new Date(ms + 7_200_000).toISOString().slice(0, -1)}+02:00`); // prettier-ignore
      lines.push(`${110 + (i % 90)} 00,CZ,${stamp(dispatched)},${stamp(delivered)}`);
    }
    const result = await runCli(['history', 'import', csv('timestamps-large.csv', lines), '--json'], 120_000);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ imported: 20_000, skipped: 0, errors: [] });
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transit_history WHERE country_code = 'CZ'");
    expect(rows[0].n).toBe(20_000);
  }, 180_000);

  it('refuses a file whose first line is not the header, importing nothing', async () => {
    const file = csv('noheader.csv', ['7000,CH,2026-03-02,2026-03-04']);
    expectOneLineFailure(await runCli(['history', 'import', file]), /the first line must be the header postal_code,country_code,dispatch_date,delivered_date/); // prettier-ignore
    expect(await rowsFor('CH')).toEqual([]);
  });

  it('refuses an empty file, or one holding only a byte order mark, as a file without the header', async () => {
    for (const [name, content] of [
      ['empty.csv', ''],
      ['bom-only.csv', '\uFEFF'],
      ['blank.csv', '\r\n\r\n'],
    ]) {
      const file = path.join(dir, name);
      writeFileSync(file, content);
      expectOneLineFailure(await runCli(['history', 'import', file, '--json']), /the first line must be the header postal_code,country_code,dispatch_date,delivered_date/); // prettier-ignore
    }
  });

  it('imports nothing, successfully, from a file holding only the header', async () => {
    const result = await runCli([
      'history',
      'import',
      csv('header-only.csv', ['postal_code,country_code,dispatch_date,delivered_date']),
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ imported: 0, skipped: 0, errors: [] });
  });

  it('refuses a missing file with a one-line reason', async () => {
    expectOneLineFailure(await runCli(['history', 'import', path.join(dir, 'absent.csv')]), /cannot read .*absent\.csv: no such file/);
  });

  it('refuses a directory given as the file with a one-line reason', async () => {
    expectOneLineFailure(await runCli(['history', 'import', dir, '--json']), /^error: cannot read .*: is a directory$/);
  });

  // How long it takes is a benchmark's to say (bench/history-import), not a test's: a bound on a
  // shared machine fails with the machine's load.
  it('imports 150,000 rows, every one of them', async () => {
    const lines = ['postal_code,country_code,dispatch_date,delivered_date'];
    for (let i = 0; i < 150_000; i += 1) {
      const day = 1 + (i % 28);
      const dispatch = `2025-${String(1 + (i % 12)).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
      const delivered = `2025-${String(1 + (i % 12)).padStart(2, '0')}-${String(Math.min(28, day + 1 + (i % 4))).padStart(2, '0')}`;
      lines.push(`${String(10000 + (i % 900) * 97).slice(0, 5)},DK,${dispatch},${delivered}`);
    }
    const file = csv('large.csv', lines);
    const result = await runCli(['history', 'import', file, '--json'], 170_000);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ imported: 150_000, skipped: 0, errors: [] });
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transit_history WHERE country_code = 'DK'");
    expect(rows[0].n).toBe(150_000);
  }, 180_000);
});

describe('loadTransitStatistics', () => {
  it('returns histograms per level, split into fitted and held-out history, and the conditions in force', async () => {
    const lines = ['postal_code,country_code,dispatch_date,delivered_date'];
    // 40 deliveries to 1100 and 40 to 1200 (Luxembourg), one a week, each 2 business days.
    for (let week = 0; week < 40; week += 1) {
      const monday = new Date(Date.UTC(2026, 0, 5) + week * 7 * 86_400_000).toISOString().slice(0, 10);
      const wednesday = new Date(Date.UTC(2026, 0, 7) + week * 7 * 86_400_000).toISOString().slice(0, 10);
      lines.push(`1100,LU,${monday},${wednesday}`, `2200,LU,${monday},${wednesday}`);
    }
    const imported = await runCli(['history', 'import', csv('lu.csv', lines), '--json']);
    expect(JSON.parse(imported.stdout)).toMatchObject({ skipped: 0 });
    expect((await runCli(['conditions', 'set', '--country', 'LU', '--postal-prefix', '11', '--delay-days', '2', '--json'])).code).toBe(0);
    expect((await runCli(['conditions', 'set', '--country', 'LU', '--postal-prefix', '22', '--delay-days', '5', '--json'])).code).toBe(0);

    const stats = await loadTransitStatistics(pool, { countryCode: 'LU', postalCode: '1100', today: '2026-12-31' });
    const sum = (h: readonly number[]) => h.reduce((a, b) => a + b, 0);
    expect(sum(stats.postalCode.fit) + sum(stats.postalCode.calibration)).toBe(40);
    expect(sum(stats.postalCode.calibration)).toBe(10);
    expect(sum(stats.country.fit) + sum(stats.country.calibration)).toBe(80);
    // Most took 2 business days; a public holiday on the Tuesday (23 June) makes one of them 1.
    expect(sum(stats.postalCode.fit)).toBe(30);
    expect(stats.postalCode.fit[2]).toBeGreaterThanOrEqual(25);
    expect(stats.country.recent).toEqual([]);
    // The country's sums for the shrinkage weights: two codes in two prefixes, the same deliveries.
    const country = stats.country.fit.map((n, days) => [days, n + (stats.country.calibration[days] ?? 0)]);
    expect(stats.areaMoments).toMatchObject({
      deliveries: 80,
      codes: 2,
      prefixes: 2,
      sum: country.reduce((s, [days, n]) => s + days * n, 0),
      sumOfSquares: country.reduce((s, [days, n]) => s + days * days * n, 0),
    });
    expect(stats.operatorDelays).toEqual([{ postalPrefix: '11', delayDays: 2, until: null }]);
    await runCli(['conditions', 'clear', '--country', 'LU']);
  });
});

describe('recordServiceDelivery', () => {
  it('adds a completed dispatch to the history once, however often it is retried', async () => {
    const dispatchId = randomUUID();
    const row = { postalCode: '00-950', countryCode: 'PL', dispatchDate: '2026-03-02', deliveredDate: '2026-03-04', businessDays: 2 };
    await recordServiceDelivery(pool, dispatchId, row, '2026-03-04');
    await recordServiceDelivery(pool, dispatchId, row, '2026-03-04');
    expect(await rowsFor('PL', dispatchId)).toEqual([{ postal_code: '00950', postal_prefix: '00', business_days: 2, source: 'service' }]);
  });
});

describe('conditions', () => {
  it('sets a delay and prints it as { id, country_code, postal_prefix, delay_days, until, created_at, cleared_at }', async () => {
    // A date to come, whenever the test runs (an --until before today is refused).
    const until = new Date(Date.now() + 25 * 86_400_000).toISOString().slice(0, 10);
    const result = await runCli(['conditions', 'set', '--country', 'fr', '--postal-prefix', '75', '--delay-days', '2', '--until', until, '--json']); // prettier-ignore
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({ country_code: 'FR', postal_prefix: '75', delay_days: 2, until, cleared_at: null });
    expect(body.id).toMatch(/^cnd_[0-9a-f]{16}$/);
    // Other test files share the database: leave no French delay behind.
    await runCli(['conditions', 'clear', '--id', body.id as string]);
  });

  it('lists the conditions in force as { data }, and clears one by id', async () => {
    const set = JSON.parse((await runCli(['conditions', 'set', '--country', 'NL', '--delay-days', '1', '--json'])).stdout) as {
      id: string;
    };
    const listed = JSON.parse((await runCli(['conditions', 'list', '--json'])).stdout) as { data: Array<{ id: string }> };
    expect(listed.data.map((c) => c.id)).toContain(set.id);
    const cleared = JSON.parse((await runCli(['conditions', 'clear', '--id', set.id, '--json'])).stdout) as { data: Array<{ id: string; cleared_at: string }> }; // prettier-ignore
    expect(cleared.data).toHaveLength(1);
    expect(cleared.data[0].cleared_at).toEqual(expect.any(String));
    const after = JSON.parse((await runCli(['conditions', 'list', '--json'])).stdout) as { data: Array<{ id: string }> };
    expect(after.data.map((c) => c.id)).not.toContain(set.id);
  });

  it('clears every condition of a country', async () => {
    await runCli(['conditions', 'set', '--country', 'PT', '--delay-days', '1']);
    await runCli(['conditions', 'set', '--country', 'PT', '--postal-prefix', '10', '--delay-days', '3']);
    const cleared = JSON.parse((await runCli(['conditions', 'clear', '--country', 'PT', '--json'])).stdout) as { data: unknown[] };
    expect(cleared.data).toHaveLength(2);
  });

  it('refuses a prefix the model would never match, with a one-line reason', async () => {
    expectOneLineFailure(await runCli(['conditions', 'set', '--country', 'FR', '--postal-prefix', '750', '--delay-days', '2']), /^error: invalid --postal-prefix: is not a postal prefix/); // prettier-ignore
  });

  it('refuses an --until before today (UTC), a delay that would never be in force, and sets nothing', async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const before = await pool.query("SELECT count(*)::int AS n FROM carrier_conditions WHERE country_code = 'LU'");
    expectOneLineFailure(
      await runCli(['conditions', 'set', '--country', 'LU', '--delay-days', '2', '--until', yesterday, '--json']),
      new RegExp(`^error: invalid --until: ${yesterday} is before today \\(UTC\\)`),
    );
    const after = await pool.query("SELECT count(*)::int AS n FROM carrier_conditions WHERE country_code = 'LU'");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('takes today as --until: the delay applies to the end of the day', async () => {
    // The CLI reads its own clock: begun at 23:59:59 UTC, it may read tomorrow's date and refuse the
    // test's today as "before today"; then once more, on the new day.
    const { today, result } = await onOneUtcDay(async (today) => ({
      today,
      result: await runCli(['conditions', 'set', '--country', 'LU', '--delay-days', '2', '--until', today, '--json']),
    }));
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as { id: string; until: string };
    expect(body.until).toBe(today);
    await runCli(['conditions', 'clear', '--id', body.id]);
  });

  it('refuses clear without exactly one of --id or --country', async () => {
    expectOneLineFailure(await runCli(['conditions', 'clear']), /give exactly one of --id or --country/);
  });
});
