// Checkpoint times as the providers write them (DESIGN §10 "Times"): with an offset or `Z` they are
// instants and are taken as they are; without one they are wall-clock times of the place the scan
// happened, read in the time zone of the checkpoint's country if the body names it, else of the
// caller's fallback country (the dispatch's destination), each country's most populous zone
// (country-zones.ts). A bare date is noon of that date in that zone, the least wrong hour whatever
// the scan's real time was; where that guess puts the checkpoint after its receipt, it happened when
// received (checkpointOccurredAt), not outside the time bounds. A leap second (:60) is the last millisecond of the minute it ends, so the
// scan keeps the date the carrier wrote; "t" and "z" may be lower-case (RFC 3339 §5.6); `24:00` (ISO
// 8601's end of day, seen in carrier feeds) is 00:00 of the next day; the seconds' fraction may follow
// a comma (ISO 8601's preferred sign) and have any number of digits (RFC 3339 `1*DIGIT`), read to the
// millisecond. A time the service cannot read makes its checkpoint `ignored`
// (the provider resends it with every later webhook, so it must not refuse the body), so every
// extended form ISO 8601 and RFC 3339 allow is read. The original string always travels with the
// time, so the carrier event keeps what the provider said.
import type { CheckpointTime } from './provider.js';
import { countryAlpha2, countryZone } from './country-zones.js';

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?$/;
const WITH_OFFSET = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|z|[+-]\d{2}(?::?\d{2})?)$/;

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/**
 * A provider's time string as a CheckpointTime, or undefined when it is not an ISO 8601 date or
 * date-time (the caller names the field). `countryCode` (alpha-2 or alpha-3) is where the checkpoint
 * happened, when the body says; it is kept only for local times, which need it.
 */
export function readCheckpointTime(original: string, countryCode?: string | null): CheckpointTime | undefined {
  const text = endOfDayAsNextDay(original.trim().replace(/(:\d{2}),(\d)/, '$1.$2'));
  if (text === undefined) return undefined;
  const withOffset = WITH_OFFSET.exec(text);
  if (withOffset) {
    const [, date, time, offset] = withOffset;
    const clock = wallClock(`${date}T${time}`);
    const minutes = offsetMinutes(offset);
    if (!clock || minutes === undefined) return undefined;
    const ms = asUtc(clock) - minutes * 60_000;
    return { kind: 'instant', iso: new Date(ms).toISOString(), original };
  }
  if (!wallClock(text)) return undefined;
  const country = countryAlpha2(countryCode);
  return { kind: 'local', local: text.replace(/[ t]/, 'T'), ...(country ? { countryCode: country } : {}), original };
}

/**
 * The ISO instant (UTC, `…Z`) a CheckpointTime stands for: an instant as it is; a local time in the
 * zone of its country, else of `fallbackCountry`, else UTC; a bare date at noon.
 */
export function resolveCheckpointTime(time: CheckpointTime, fallbackCountry: string): string {
  if (time.kind === 'instant') return time.iso;
  const clock = wallClock(time.local);
  if (!clock) throw new Error(`not a local date or date-time: ${time.local}`);
  const zone = countryZone(time.countryCode) ?? countryZone(fallbackCountry) ?? 'UTC';
  return new Date(zonedWallClockToEpoch(clock, zone)).toISOString();
}

/** UTC+14 (Kiribati's Line Islands), the easternmost offset in use: no wall clock shows anywhere earlier than there. */
const EASTERNMOST_OFFSET_MS = 14 * 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The occurred_at of a checkpoint received at `receivedAt`: resolveCheckpointTime's instant, except
 * that a time written without an offset (its zone a guess) that reads as after it was received is
 * the time received, when the guess is what put it there: when some place on Earth had already
 * reached that wall clock (a bare date: that date) by `receivedAt`, and it is at most a day ahead.
 * So a bare date of today, received before noon there, and a local time read in a country's most
 * populous zone when the scan was further east (RU, CA, ID, US, AU, BR…), are kept, not `ignored` as
 * outside the time bounds; after Delivered the provider usually sends nothing more, and DESIGN §6
 * loses nothing it accepted. The carrier event keeps the string as sent. A time with an offset in
 * the future says so itself: it stays as it is, and the bounds judge it.
 */
export function checkpointOccurredAt(time: CheckpointTime, fallbackCountry: string, receivedAt: Date): string {
  const resolved = resolveCheckpointTime(time, fallbackCountry);
  if (time.kind === 'instant') return resolved;
  const ahead = Date.parse(resolved) - receivedAt.getTime();
  if (ahead <= 0 || ahead > DAY_MS) return resolved;
  const clock = wallClock(time.local)!;
  const bareDate = time.local.length === 10;
  const firstShown = asUtc(bareDate ? { ...clock, hour: 0, minute: 0, second: 0, millisecond: 0 } : clock) - EASTERNMOST_OFFSET_MS;
  return firstShown <= receivedAt.getTime() ? receivedAt.toISOString() : resolved;
}

const END_OF_DAY = /^(\d{4})-(\d{2})-(\d{2})([Tt ])24:00(?::00(?:\.0+)?)?(?=$|[Zz+-])/;

/**
 * `…T24:00`, `…T24:00:00`, `…T24:00:00.000` (ISO 8601: the end of that day, the same instant as 00:00
 * of the next) written as 00:00:00 of the next day, the rest (an offset) kept; undefined when the date
 * is not a real one; any other text as it is.
 */
function endOfDayAsNextDay(text: string): string | undefined {
  const m = END_OF_DAY.exec(text);
  if (!m) return text;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  if (month < 1 || month > 12 || date.getUTCDate() !== day || date.getUTCMonth() !== month - 1) return undefined;
  date.setUTCDate(day + 1);
  const next = `${String(date.getUTCFullYear()).padStart(4, '0')}-${String(date.getUTCMonth() + 1).padStart(2, '0')}-${String(date.getUTCDate()).padStart(2, '0')}`; // prettier-ignore
  return next.length === 10 ? `${next}${m[4] === ' ' ? 'T' : m[4]}00:00:00${text.slice(m[0].length)}` : undefined;
}

/** `Z`, `+01:00`, `+0100` or `+01` as minutes east of UTC; undefined beyond ±23:59. */
function offsetMinutes(offset: string): number | undefined {
  if (offset === 'Z' || offset === 'z') return 0;
  const digits = offset.slice(1).replace(':', '');
  const [hours, minutes] = [Number(digits.slice(0, 2)), Number(digits.slice(2, 4) || '0')];
  if (hours > 23 || minutes > 59) return undefined;
  return (offset[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/** The wall clock read as if in UTC; years 0–99 stay those years (Date.UTC would read them as 1900–1999). */
function asUtc(clock: WallClock): number {
  const date = new Date(Date.UTC(2000, clock.month - 1, clock.day, clock.hour, clock.minute, clock.second, clock.millisecond));
  date.setUTCFullYear(clock.year);
  return date.getTime();
}

/** The fields of a local date or date-time, or undefined when it is not one (or not a real date). A bare date is noon. */
function wallClock(text: string): WallClock | undefined {
  const m = LOCAL.exec(text);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const bareDate = m[4] === undefined;
  const clock: WallClock = {
    year,
    month,
    day,
    hour: bareDate ? 12 : Number(m[4]),
    minute: bareDate ? 0 : Number(m[5]),
    second: m[6] === undefined ? 0 : Number(m[6]),
    millisecond: m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3)),
  };
  if (month < 1 || month > 12 || clock.hour > 23 || clock.minute > 59 || clock.second > 60) return undefined;
  // A leap second ends a minute (23:59:60 UTC; 05:29:60 at +05:30): read as that minute's last millisecond.
  if (clock.second === 60) Object.assign(clock, { second: 59, millisecond: 999 });
  const probe = new Date(Date.UTC(year, month - 1, day));
  if (probe.getUTCDate() !== day || probe.getUTCMonth() !== month - 1) return undefined;
  return clock;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at an instant, in milliseconds (Intl: the zone's wall clock at that instant, minus the instant). */
function offsetAt(epochMs: number, zone: string): number {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, format);
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(epochMs))) parts[part.type] = Number(part.value);
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(epochMs / 1000) * 1000;
}

/**
 * The instant at which the zone's clocks showed this wall-clock time. Around a change of offset the
 * answer follows the usual "compatible" rule (as Temporal's and java.time's defaults do): a time that
 * occurs twice (clocks set back) is the earlier; a time that never occurs (clocks set forward) is
 * moved forward by the gap.
 */
export function zonedWallClockToEpoch(clock: WallClock, zone: string): number {
  const asUtc = Date.UTC(clock.year, clock.month - 1, clock.day, clock.hour, clock.minute, clock.second, clock.millisecond);
  const DAY = 86_400_000;
  const before = offsetAt(asUtc - DAY, zone);
  const after = offsetAt(asUtc + DAY, zone);
  const candidates = [...new Set([before, after])]
    .map((offset) => asUtc - offset)
    .filter((epoch) => asUtc - offsetAt(epoch, zone) === epoch)
    .sort((a, b) => a - b);
  // No candidate: the time fell in a gap; read it with the offset in force before the gap.
  return candidates.length > 0 ? candidates[0] : asUtc - before;
}
