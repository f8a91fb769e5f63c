// The time bounds of docs/http-contract.md "Input bounds and integrity promises": what the service accepts as a dispatch date and as a carrier
// event's occurred_at. A date outside them is refused at the edge (400 naming the field), so that a
// far-future date can neither wedge a workflow (the prediction cannot reach past year 9999) nor freeze
// a card (every real scan after a 2099 event would be stale). Pure: `now` is passed in.

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The bounds, in one place; the messages and the OpenAPI descriptions are written from these. */
export const TIME_BOUNDS = {
  /** dispatch_date may be at most this many days in the past… */
  dispatchDateMaxAgeDays: 90,
  /** …and at most this many days in the future. */
  dispatchDateMaxLeadDays: 1,
  /** occurred_at may be at most this many days before the dispatch date… */
  eventBeforeDispatchDays: 7,
  /** …and at most this many minutes in the future (carrier clocks drift). */
  eventMaxLeadMinutes: 15,
} as const;

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

export const DISPATCH_DATE_RULE = `must lie within [now − ${plural(TIME_BOUNDS.dispatchDateMaxAgeDays, 'day')}, now + ${plural(TIME_BOUNDS.dispatchDateMaxLeadDays, 'day')}]`; // prettier-ignore
export const OCCURRED_AT_RULE = `must lie within [dispatch_date − ${plural(TIME_BOUNDS.eventBeforeDispatchDays, 'day')}, now + ${plural(TIME_BOUNDS.eventMaxLeadMinutes, 'minute')}]`; // prettier-ignore

/** Why a dispatch date is out of bounds, or undefined when it is within them. */
export function dispatchDateProblem(dispatchDate: string | Date, now: Date): string | undefined {
  const earliest = now.getTime() - TIME_BOUNDS.dispatchDateMaxAgeDays * DAY_MS;
  const latest = now.getTime() + TIME_BOUNDS.dispatchDateMaxLeadDays * DAY_MS;
  return outside(instant(dispatchDate), earliest, latest, DISPATCH_DATE_RULE);
}

/** Why a carrier event's occurred_at is out of bounds for its dispatch, or undefined when it is within them. */
export function occurredAtProblem(occurredAt: string | Date, dispatchDate: string | Date, now: Date): string | undefined {
  const earliest = instant(dispatchDate) - TIME_BOUNDS.eventBeforeDispatchDays * DAY_MS;
  const latest = now.getTime() + TIME_BOUNDS.eventMaxLeadMinutes * MINUTE_MS;
  return outside(instant(occurredAt), earliest, latest, OCCURRED_AT_RULE);
}

/** The latest occurred_at accepted at `now` (the test helpers keep their synthesized events within it). */
export function latestOccurredAt(now: Date): Date {
  return new Date(now.getTime() + TIME_BOUNDS.eventMaxLeadMinutes * MINUTE_MS);
}

function outside(at: number, earliest: number, latest: number, rule: string): string | undefined {
  if (Number.isNaN(at)) return 'is not a valid instant';
  if (at >= earliest && at <= latest) return undefined;
  return `${rule}, here ${iso(earliest)} to ${iso(latest)}`;
}

const instant = (value: string | Date) => (value instanceof Date ? value.getTime() : Date.parse(value));
const iso = (ms: number) => new Date(ms).toISOString();
