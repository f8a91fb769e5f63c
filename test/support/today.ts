// The dates a test that reads the clock (today's date, business days, holidays, the recent period)
// runs as of, instead of the wall clock (docs/testing.md "Running the suite as of a date"): such a
// test takes `today` as a parameter and runs once per date here. By default a Saturday and a
// public holiday, so `npm test` shows on any day that the suite does not depend on the day it runs;
// TEST_TODAY=2027-03-29 (or a comma-separated list) runs them as of the dates given instead.
// The days the statistics read are the tests' `today`; Postgres's now() is the real clock, so these
// tests never read now() for a date.

/** A Saturday, and New Year's Day 2027: a Friday, and a public holiday nearly everywhere. */
export const DEFAULT_AS_OF_DATES = ['2026-11-28', '2027-01-01'] as const;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The dates of TEST_TODAY, or DEFAULT_AS_OF_DATES; a malformed one stops the run rather than testing the wrong day. */
export function asOfDates(env: string | undefined = process.env.TEST_TODAY): string[] {
  if (env === undefined || env.trim() === '') return [...DEFAULT_AS_OF_DATES];
  const dates = env.split(',').map((d) => d.trim());
  for (const date of dates)
    if (!ISO_DATE.test(date) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date)
      throw new Error(`TEST_TODAY: not a YYYY-MM-DD date: ${date}`);
  return dates;
}

/** The calendar date `days` before `today` ('YYYY-MM-DD', UTC). */
export function daysBefore(today: string, days: number): string {
  return new Date(Date.parse(`${today}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * For a test through a process with its own clock (the CLI, the API, the worker) that passes it
 * today's UTC date: runs `attempt` with it, and once more with the new date when midnight UTC passed
 * while it ran, since the process may then have read its clock on the other side of midnight (the
 * test's today its yesterday). The answer is that of an attempt that began and ended on one day.
 */
export async function onOneUtcDay<T>(attempt: (today: string) => Promise<T>, clock: () => number = Date.now): Promise<T> {
  const utcDay = () => new Date(clock()).toISOString().slice(0, 10);
  const today = utcDay();
  const result = await attempt(today);
  const after = utcDay();
  return after === today ? result : attempt(after);
}
