// The time bounds of docs/http-contract.md "Input bounds and integrity promises" as pure functions (domain/input-bounds.ts): inclusive at both ends,
// relative to the `now` passed in and, for occurred_at, to the dispatch date.
import { describe, expect, it } from '@jest/globals';
import { dispatchDateProblem, latestOccurredAt, occurredAtProblem, TIME_BOUNDS } from '../../domain/input-bounds.js';

const now = new Date('2026-11-24T12:00:00.000Z');
const DAY = 86_400_000;
const MINUTE = 60_000;
const shifted = (from: Date | string, ms: number) => new Date(new Date(from).getTime() + ms).toISOString();

describe('dispatchDateProblem', () => {
  it('accepts both ends of [now − 90 days, now + 1 day]', () => {
    expect(dispatchDateProblem(shifted(now, -TIME_BOUNDS.dispatchDateMaxAgeDays * DAY), now)).toBeUndefined();
    expect(dispatchDateProblem(shifted(now, TIME_BOUNDS.dispatchDateMaxLeadDays * DAY), now)).toBeUndefined();
  });

  it('refuses a millisecond beyond either end, saying the rule and the instants', () => {
    expect(dispatchDateProblem(shifted(now, -90 * DAY - 1), now)).toBe(
      'must lie within [now − 90 days, now + 1 day], here 2026-08-26T12:00:00.000Z to 2026-11-25T12:00:00.000Z',
    );
    expect(dispatchDateProblem(shifted(now, DAY + 1), now)).toMatch(/^must lie within/);
  });

  it('reads any offset as the instant it names', () => {
    expect(dispatchDateProblem('2026-11-25T23:59:00+23:59', now)).toBeUndefined();
    expect(dispatchDateProblem('2026-11-25T12:00:00-00:01', now)).toMatch(/^must lie within/);
  });
});

describe('occurredAtProblem', () => {
  const dispatchDate = '2026-11-10T08:00:00Z';

  it('accepts both ends of [dispatch_date − 7 days, now + 15 minutes]', () => {
    expect(occurredAtProblem(shifted(dispatchDate, -7 * DAY), dispatchDate, now)).toBeUndefined();
    expect(occurredAtProblem(shifted(now, 15 * MINUTE), dispatchDate, now)).toBeUndefined();
    expect(latestOccurredAt(now).toISOString()).toBe(shifted(now, 15 * MINUTE));
  });

  it('refuses a millisecond beyond either end', () => {
    expect(occurredAtProblem(shifted(dispatchDate, -7 * DAY - 1), dispatchDate, now)).toMatch(/^must lie within \[dispatch_date − 7 days/);
    expect(occurredAtProblem(shifted(now, 15 * MINUTE + 1), dispatchDate, now)).toMatch(/now \+ 15 minutes\]/);
  });

  it('refuses year 2099 and year 0519', () => {
    expect(occurredAtProblem('2099-01-01T00:00:00Z', dispatchDate, now)).toBeDefined();
    expect(occurredAtProblem('0519-06-17T20:40:40.791786+21:27', dispatchDate, now)).toBeDefined();
  });
});
