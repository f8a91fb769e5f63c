// Business-day arithmetic on calendar dates written 'YYYY-MM-DD' (UTC), for the delivery prediction.
// Dates are handled as whole days since the Unix epoch, never as local-time Date objects, so a
// server's time zone or a DST change cannot shift a date by one.
//
// A business day is Monday to Friday that is not a national public holiday of the destination
// country (domain/holidays.ts), when the caller names one. Every function takes that country as an
// optional last argument: without it only weekends are skipped, as before holidays existed.
import { isPublicHoliday } from './holidays.js';

const MS_PER_DAY = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 of a 'YYYY-MM-DD' date; throws RangeError for anything else (e.g. 2026-02-30). */
function toEpochDay(date: string): number {
  const match = ISO_DATE.exec(date);
  if (!match) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  // Date.UTC silently rolls 2026-02-30 over to March; a round trip catches it.
  if (fromEpochDay(ms / MS_PER_DAY) !== date) throw new RangeError(`not a calendar date: ${date}`);
  return ms / MS_PER_DAY;
}

function fromEpochDay(epochDay: number): string {
  return new Date(epochDay * MS_PER_DAY).toISOString().slice(0, 10);
}

/** 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday). */
function weekday(epochDay: number): number {
  return (((epochDay + 4) % 7) + 7) % 7;
}

function isWorkingDay(epochDay: number, country: string | undefined): boolean {
  const day = weekday(epochDay);
  if (day === 0 || day === 6) return false;
  return country === undefined || !isPublicHoliday(country, fromEpochDay(epochDay));
}

/** True when `date` is a business day: Monday to Friday, and not a public holiday of `country` if given. */
export function isBusinessDay(date: string, country?: string): boolean {
  return isWorkingDay(toEpochDay(date), country);
}

/** The first business day strictly after `date`. */
export function nextBusinessDay(date: string, country?: string): string {
  let day = toEpochDay(date) + 1;
  while (!isWorkingDay(day, country)) day += 1;
  return fromEpochDay(day);
}

/** `date` itself when it is a business day, else the next one. */
export function businessDayOnOrAfter(date: string, country?: string): string {
  return isBusinessDay(date, country) ? date : nextBusinessDay(date, country);
}

/**
 * The date `n` business days after `date` (n ≥ 0): Friday + 1 → Monday; with a country, its
 * public holidays are skipped too. With n = 0 the date is returned unchanged, even on a weekend.
 */
export function addBusinessDays(date: string, n: number, country?: string): string {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`business days must be a whole number ≥ 0, got ${n}`);
  let day = toEpochDay(date);
  for (let left = n; left > 0;) {
    day += 1;
    if (isWorkingDay(day, country)) left -= 1;
  }
  return fromEpochDay(day);
}

/** How many business days lie in (from, to]: the n with addBusinessDays(from, n) = to when `to` is a business day. */
/** Ten years: far beyond any delivery, far below a span that takes noticeable time to count. */
const MAX_COUNTED_SPAN_DAYS = 3660;

export function businessDaysBetween(from: string, to: string, country?: string): number {
  const start = toEpochDay(from);
  const end = toEpochDay(to);
  // Counting day by day is linear in the span: a span no transit can have (a date in year 9999)
  // is refused at once rather than computed for minutes (docs/states.md "Failures that no retry fixes").
  if (end - start > MAX_COUNTED_SPAN_DAYS) throw new RangeError(`${from} → ${to} is longer than any transit time`);
  let count = 0;
  for (let day = start + 1; day <= end; day += 1) if (isWorkingDay(day, country)) count += 1;
  return count;
}

/** The UTC calendar date of an ISO 8601 timestamp with an offset: '2026-11-23T23:30:00-02:00' → '2026-11-24'. */
export function utcDateOf(timestamp: string): string {
  const ms = Date.parse(timestamp);
  if (Number.isNaN(ms)) throw new RangeError(`not an ISO 8601 timestamp: ${timestamp}`);
  return new Date(ms).toISOString().slice(0, 10);
}

/** The later of two 'YYYY-MM-DD' dates (they compare correctly as strings). */
export function laterDate(a: string, b: string): string {
  return a >= b ? a : b;
}
