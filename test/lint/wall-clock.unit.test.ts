// The suite does not depend on the day it runs (docs/testing.md "Running the suite as of a date"):
// the tests of the calendar-reading code (test/domain/, test/db/: business days, holidays, the
// recent period, the statistics a prediction reads) take their `today` as a parameter, from
// test/support/today.ts, and none of them reads today's date from the wall clock. A line that
// does (a date cut from `new Date()` or `Date.now()`, Postgres's CURRENT_DATE / now()::date, or the
// projection activity made without the test's clock)
// fails here, naming the file and line. Reading the clock for a duration (a cache's age) is fine.
// The product's own code is held to the same (below): a date comes from the clock it is given.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { onOneUtcDay } from '../support/today.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FOLDERS = ['test/domain', 'test/db'];

/** Ways a test takes a calendar date from the wall clock. */
const WALL_CLOCK_DATES: readonly RegExp[] = [
  /new Date\(\)\.toISOString\(\)\.slice\(0,\s*10\)/,
  /new Date\(Date\.now\(\)[^)]*\)\.toISOString\(\)\.slice\(0,\s*10\)/,
  /Date\.now\(\)\s*[-+/]\s*[^;]*86_?400_?000/,
  /\bCURRENT_DATE\b/i,
  /now\(\)\s*::\s*date/i,
  // The projection activity predicts as of its own clock: given none, the wall clock's today (it
  // failed transit-statistics-cache.test.ts once the real date left the test's fixed one).
  /createProjectionActivities\(\{(?![^}]*\bnow:)/,
];

const readsWallClockDate = (line: string) => WALL_CLOCK_DATES.some((pattern) => pattern.test(line));

/**
 * The product's code (its SQL included) takes a date from a clock it is given, `now` or `today`
 * (activities/projection.ts, db/transit-statistics.ts), never from Postgres's current_date or a
 * `new Date()` of its own: a worker given a clock, and a test run as of a date, then read the same
 * day everywhere (judgeServiceDelivery's norm read current_date once, db/shared-history.test.ts).
 */
const PRODUCT_FOLDERS = ['activities', 'api', 'cli', 'dashboard', 'db', 'domain', 'ingest', 'platform', 'worker', 'workflows'];
/** Where the wall clock's date is the answer, and why. */
const PRODUCT_WALL_CLOCK_DATES: Readonly<Record<string, string>> = {
  // The operator's --until is checked against the day the command runs (docs/admin-cli.md).
  'cli/admin/conditions-commands.ts': 'until >= new Date().toISOString().slice(0, 10)',
};
const PRODUCT_PATTERNS = WALL_CLOCK_DATES.slice(0, 5);
const isComment = (line: string) => /^\s*(\/\/|\*|\/\*)/.test(line);

function testFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join(folder, file));
}

/** The product's lines that take a date from the wall clock, as `file: line`. */
function productWallClockDates(): string[] {
  return PRODUCT_FOLDERS.flatMap(testFiles).flatMap((file) =>
    readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .filter((line) => !isComment(line) && PRODUCT_PATTERNS.some((pattern) => pattern.test(line)))
      .map((line) => `${file}: ${line.trim()}`),
  );
}

describe('the calendar-reading tests', () => {
  it('recognise each way of taking today from the wall clock (the check below can fail)', () => {
    for (const line of [
      'const today = new Date().toISOString().slice(0, 10);',
      'const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);',
      'const dispatched = new Date(Date.now() - (45 + 3 * i) * 86_400_000);',
      "await pool.query('SELECT CURRENT_DATE - 3')",
      'WHERE dispatch_date > now()::date - 42',
      'const { projectChange } = createProjectionActivities({ pool, countryStatistics: cache });',
    ])
      expect({ line, reads: readsWallClockDate(line) }).toEqual({ line, reads: true });
    expect(readsWallClockDate('const cache = new CountryStatisticsCache(pool, { now: () => new Date(now) });')).toBe(false);
    expect(readsWallClockDate('const today = asOfDates()[0];')).toBe(false);
    expect(readsWallClockDate('createProjectionActivities({ pool, now: () => new Date(`${today}T12:00:00Z`) });')).toBe(false);
  });

  it('take today as a parameter: none reads a date from the wall clock', () => {
    const found = FOLDERS.flatMap(testFiles).flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (readsWallClockDate(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

describe('the product', () => {
  it('recognises a date read from Postgres’s clock or its own, in code and not in a comment', () => {
    const reads = (line: string) => !isComment(line) && PRODUCT_PATTERNS.some((pattern) => pattern.test(line));
    expect(reads('WHERE h.country_code = $2 AND h.delivered_date >= current_date - ${LOOK_BACK_DAYS}')).toBe(true);
    expect(reads('const today = new Date().toISOString().slice(0, 10);')).toBe(true);
    expect(reads("    // SQL's `::date`, `current_date` and `interval '1 day'` follow the session's zone.")).toBe(false);
    expect(reads("WHERE delivered_date < (now() - $1 * interval '1 millisecond')::date")).toBe(false);
    expect(reads('const today = now().toISOString().slice(0, 10);')).toBe(false);
  });

  it('takes every date from the clock it is given: none from current_date or a new Date() of its own, but where the wall clock is the answer', () => {
    const found = productWallClockDates();
    const allowed = Object.entries(PRODUCT_WALL_CLOCK_DATES);
    expect(found.filter((line) => !allowed.some(([file, code]) => line.startsWith(`${file}: `) && line.includes(code)))).toEqual([]);
    // Each exemption still names a line that exists (it is removed with the line).
    for (const [file, code] of allowed) expect(found.some((line) => line.startsWith(`${file}: `) && line.includes(code))).toBe(true);
  });
});

describe('onOneUtcDay, for a test passing today to a process with its own clock', () => {
  it('runs once with today when no midnight passes', async () => {
    const days: string[] = [];
    const clock = () => Date.parse('2026-12-07T23:59:00Z');
    expect(await onOneUtcDay(async (today) => (days.push(today), today), clock)).toBe('2026-12-07');
    expect(days).toEqual(['2026-12-07']);
  });

  it('runs once more with the new day when midnight UTC passed while it ran (begun at 23:59:59), and answers that', async () => {
    const days: string[] = [];
    let now = Date.parse('2026-12-31T23:59:59Z');
    const attempt = async (today: string) => {
      days.push(today);
      now += 2000;
      return today;
    };
    expect(await onOneUtcDay(attempt, () => now)).toBe('2027-01-01');
    expect(days).toEqual(['2026-12-31', '2027-01-01']);
  });
});
