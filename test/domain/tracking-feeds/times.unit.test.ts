// Checkpoint times (domain/tracking-feeds/times.ts, DESIGN §10 "Times"): a time with an offset is
// the instant it says, whatever the country; a local time is read in the zone of its country, else
// of the fallback country, and lands on the right UTC instant across daylight-saving changes (the
// repeated hour: the earlier; the skipped hour: moved forward); a bare date is noon there; the
// country table names only zones Node knows, and AfterShip's alpha-3 codes are read as alpha-2.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import countries from 'i18n-iso-countries/index.js';
import { ASSIGNED_COUNTRY_CODES } from '../../../domain/field-schemas.js';
import { COUNTRY_ZONES, countryAlpha2, countryZone } from '../../../domain/tracking-feeds/country-zones.js';
import { checkpointOccurredAt, readCheckpointTime, resolveCheckpointTime } from '../../../domain/tracking-feeds/times.js';
import { offsetOf, wallClock } from '../../fixtures/tracking-feeds/journey.js';

const resolve = (original: string, country?: string, fallback = 'GB') => {
  const time = readCheckpointTime(original, country);
  if (!time) throw new Error(`not a time: ${original}`);
  return resolveCheckpointTime(time, fallback);
};

// Instants between 2000 and 2040, to the second, and countries whose zones change offset in the year.
const instant = fc.integer({ min: Date.UTC(2000, 0, 1) / 1000, max: Date.UTC(2040, 0, 1) / 1000 }).map((s) => new Date(s * 1000));
const dstCountries = fc.constantFrom('US', 'GB', 'DE', 'FR', 'AU', 'NZ', 'CL', 'BR', 'IR', 'EG', 'MX', 'CA');

/** The instants in a year at which a zone's offset changes (a day-by-day scan, then a binary search to the minute). */
const changesCache = new Map<string, number[]>();
function changesOf(zone: string, year: number): number[] {
  const cached = changesCache.get(`${zone}/${year}`);
  if (cached) return cached;
  const found: number[] = [];
  changesCache.set(`${zone}/${year}`, found);
  for (let day = Date.UTC(year, 0, 1); day < Date.UTC(year + 1, 0, 1); day += 86_400_000) {
    if (offsetOf(new Date(day), zone) === offsetOf(new Date(day + 86_400_000), zone)) continue;
    let [low, high] = [day, day + 86_400_000];
    while (high - low > 60_000) {
      const middle = low + Math.floor((high - low) / 120_000) * 60_000;
      if (offsetOf(new Date(middle), zone) === offsetOf(new Date(low), zone)) low = middle;
      else high = middle;
    }
    found.push(high);
  }
  return found;
}
/** Instants within three hours of one of the country's offset changes: the repeated and the skipped hours. */
const nearChange = fc
  .tuple(dstCountries, fc.integer({ min: 2016, max: 2035 }), fc.nat(), fc.integer({ min: -180, max: 180 }))
  .map(([country, year, pick, minutes]) => {
    const changes = changesOf(countryZone(country)!, year);
    const change = changes.length > 0 ? changes[pick % changes.length] : Date.UTC(year, 5, 1);
    return { country, at: new Date(change + minutes * 60_000) };
  });

describe('checkpoint times', () => {
  it('keeps an instant with an offset as it is, whatever the country and the fallback', () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: -12 * 4, max: 14 * 4 }), dstCountries, dstCountries, (at, quarters, country, fallback) => {
        const minutes = quarters * 15;
        const sign = minutes < 0 ? '-' : '+';
        const offset = `${sign}${String(Math.floor(Math.abs(minutes) / 60)).padStart(2, '0')}:${String(Math.abs(minutes) % 60).padStart(2, '0')}`;
        const local = new Date(at.getTime() + minutes * 60_000).toISOString().slice(0, 19);
        const time = readCheckpointTime(`${local}${offset}`, country);
        return time?.kind === 'instant' && resolveCheckpointTime(time, fallback) === at.toISOString();
      }),
      { numRuns: 300 },
    );
  });

  it("reads a local time in its country's zone and finds the instant it was, across daylight-saving changes", () => {
    fc.assert(
      fc.property(fc.oneof(fc.record({ country: dstCountries, at: instant }), nearChange), ({ at, country }) => {
        const zone = countryZone(country)!;
        const local = wallClock(at, zone);
        const resolved = new Date(resolve(local, country));
        // Where the hour repeats (clocks set back), the earlier of the two instants is the answer:
        // same wall clock, not later than the scan, at most the repeated span earlier.
        return (
          wallClock(resolved, zone) === local && resolved.getTime() <= at.getTime() && at.getTime() - resolved.getTime() <= 3 * 3_600_000
        );
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.record({ country: dstCountries, at: instant }), nearChange), ({ at, country }) => {
        // Away from a repeated hour, the instant itself.
        const zone = countryZone(country)!;
        const unambiguous =
          offsetOf(new Date(at.getTime() - 3 * 3_600_000), zone) === offsetOf(new Date(at.getTime() + 3 * 3_600_000), zone);
        return !unambiguous || resolve(wallClock(at, zone), country) === at.toISOString();
      }),
      { numRuns: 200 },
    );
  });

  it('takes the earlier instant for a time that occurs twice (New York, 1 November 2026, 01:30)', () => {
    expect(resolve('2026-11-01T01:30:00', 'US')).toBe('2026-11-01T05:30:00.000Z');
  });

  it('moves a time that never occurred forward by the gap (New York, 8 March 2026, 02:30 → 03:30 EDT)', () => {
    expect(resolve('2026-03-08T02:30:00', 'US')).toBe('2026-03-08T07:30:00.000Z');
  });

  it('reads a local time on either side of a change with the offset in force then (Berlin, 25 October 2026)', () => {
    expect(resolve('2026-10-24T12:00:00', 'DE')).toBe('2026-10-24T10:00:00.000Z');
    expect(resolve('2026-10-26T12:00:00', 'DE')).toBe('2026-10-26T11:00:00.000Z');
  });

  it("reads a local time without a country in the fallback country's most populous zone", () => {
    expect(resolve('2026-07-01T09:00:00', undefined, 'AU')).toBe('2026-06-30T23:00:00.000Z');
    expect(resolve('2026-07-01T09:00:00', undefined, 'US')).toBe('2026-07-01T13:00:00.000Z');
  });

  it('prefers the checkpoint country over the fallback, and ignores a country it does not know', () => {
    expect(resolve('2026-07-01T09:00:00', 'JP', 'US')).toBe('2026-07-01T00:00:00.000Z');
    expect(resolve('2026-07-01T09:00:00', 'Narnia', 'US')).toBe('2026-07-01T13:00:00.000Z');
  });

  it('reads a bare date as noon of that date in the zone', () => {
    expect(resolve('2026-11-20', 'FR')).toBe('2026-11-20T11:00:00.000Z');
    expect(resolve('2026-06-20', undefined, 'US')).toBe('2026-06-20T16:00:00.000Z');
  });

  it('takes a time without offset that reads as after its receipt only because of the zone guessed as the time received, at most a day ahead', () => {
    const at = (original: string, receivedAt: string, country?: string, fallback = 'DE') =>
      checkpointOccurredAt(readCheckpointTime(original, country)!, fallback, new Date(receivedAt));
    // A bare date of today is noon there: received at 09:00 in Berlin, that was 3 hours ahead and `ignored`.
    expect(at('2026-11-20', '2026-11-20T08:00:00.000Z', 'DEU')).toBe('2026-11-20T08:00:00.000Z');
    // Read in Moscow (the most populous zone), scanned at 14:00 in Vladivostok (UTC+10): 04:00Z, not 11:00Z.
    expect(at('2026-11-20T14:00:00', '2026-11-20T04:05:00.000Z', 'RU')).toBe('2026-11-20T04:05:00.000Z');
    // The same on either side of midnight in Moscow: Vladivostok's date is already the next day.
    expect(at('2026-11-20T06:00:00', '2026-11-19T20:30:00.000Z', 'RU')).toBe('2026-11-19T20:30:00.000Z');
    // Not ahead: as resolved. With an offset: as it says, however far ahead (the bounds judge it).
    expect(at('2026-11-19', '2026-11-20T08:00:00.000Z', 'DEU')).toBe('2026-11-19T11:00:00.000Z');
    expect(at('2026-11-20T14:00:00+01:00', '2026-11-20T08:00:00.000Z')).toBe('2026-11-20T13:00:00.000Z');
    expect(at('2026-11-20T14:00:00Z', '2026-11-20T08:00:00.000Z', 'DEU')).toBe('2026-11-20T14:00:00.000Z');
    // A date or time no place on Earth had reached when it came (UTC+14 the first), or more than a day ahead: as resolved.
    expect(at('2026-11-21', '2026-11-20T09:00:00.000Z', 'DEU')).toBe('2026-11-21T11:00:00.000Z');
    expect(at('2026-11-20T23:30:00', '2026-11-20T09:00:00.000Z', 'DEU')).toBe('2026-11-20T22:30:00.000Z');
    expect(at('2026-11-21', '2026-11-20T10:30:00.000Z', undefined, 'US')).toBe('2026-11-21T17:00:00.000Z');
  });

  it('keeps the original string of every time', () => {
    for (const original of ['2026-11-20', '2026-11-20T14:05:00', '2026-11-20 14:05', '2026-11-20T14:05:00+0100', '2026-11-20T14:05:00Z']) {
      expect(readCheckpointTime(original, 'FR')?.original).toBe(original);
    }
  });

  it('reads a leap second as the last millisecond of the minute it ends, on the date the carrier wrote', () => {
    expect(resolve('2016-12-31T23:59:60Z')).toBe('2016-12-31T23:59:59.999Z');
    expect(resolve('2016-12-31T18:59:60-05:00')).toBe('2016-12-31T23:59:59.999Z');
    expect(resolve('2016-12-31T23:59:60', 'GB')).toBe('2016-12-31T23:59:59.999Z');
    expect(resolve('2017-01-01T05:29:60+05:30')).toBe('2016-12-31T23:59:59.999Z');
  });

  it('reads a lower-case "t" and "z" as RFC 3339 §5.6 allows', () => {
    expect(resolve('2026-11-20t14:05:00z')).toBe('2026-11-20T14:05:00.000Z');
    expect(resolve('2026-11-20t14:05:00+01:00')).toBe('2026-11-20T13:05:00.000Z');
    expect(resolve('2026-11-20t14:05:00', 'FR')).toBe('2026-11-20T13:05:00.000Z');
  });

  it('reads 24:00 (ISO 8601 end of day, seen in carrier feeds) as 00:00 of the next day, keeping the string as sent', () => {
    // Refused before: the whole body got a 400, which the provider resends with every later webhook.
    expect(resolve('2026-11-20T24:00:00Z')).toBe('2026-11-21T00:00:00.000Z');
    expect(resolve('2026-12-31T24:00:00+01:00')).toBe('2026-12-31T23:00:00.000Z');
    expect(resolve('2026-02-28T24:00')).toBe('2026-03-01T00:00:00.000Z');
    expect(resolve('2026-11-20T24:00:00.000', 'FR')).toBe('2026-11-20T23:00:00.000Z');
    expect(resolve('2026-11-20 24:00:00', 'US')).toBe('2026-11-21T05:00:00.000Z');
    expect(readCheckpointTime('2026-11-20T24:00:00', 'FR')).toEqual({ kind: 'local', local: '2026-11-21T00:00:00', countryCode: 'FR', original: '2026-11-20T24:00:00' }); // prettier-ignore
  });

  it('reads a decimal comma in the seconds, as ISO 8601 allows', () => {
    expect(resolve('2026-11-20T14:05:00,5Z')).toBe('2026-11-20T14:05:00.500Z');
    expect(resolve('2026-11-20T14:05:00,25', 'GB')).toBe('2026-11-20T14:05:00.250Z');
  });

  it('reads a fraction of the seconds of any length (RFC 3339 time-secfrac is 1*DIGIT), with any offset form or none, to the millisecond', () => {
    // Ten or more digits made the checkpoint `ignored` (no_time): the card never had it.
    fc.assert(
      fc.property(
        instant,
        fc.stringMatching(/^[0-9]{1,30}$/),
        fc.constantFrom(['Z', 0], ['z', 0], ['+05:30', 330], ['+0530', 330], ['-08', -480], ['-03:00', -180], ['', 60]),
        (at, fraction, [offset, minutes]) => {
          const local = new Date(at.getTime() + (minutes as number) * 60_000).toISOString().slice(0, 19);
          const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
          // No offset: read in the fallback country's zone (FR: +01:00 in winter, so only January instants).
          const when = offset === '' ? new Date(Date.UTC(at.getUTCFullYear(), 0, 15, 12, 0, 0)) : at;
          const text = offset === '' ? `${new Date(when.getTime() + 3_600_000).toISOString().slice(0, 19)}.${fraction}` : `${local}.${fraction}${offset}`; // prettier-ignore
          const expected = new Date(when.getTime() + millis).toISOString();
          return resolve(text, undefined, 'FR') === expected && resolve(text.replace('.', ','), undefined, 'FR') === expected;
        },
      ),
      { numRuns: 300 },
    );
    expect(resolve('2026-11-20T24:00:00.0000000000Z')).toBe('2026-11-21T00:00:00.000Z');
  });

  it('refuses what is not an ISO 8601 date or date-time, or not a real date', () => {
    for (const text of [
      '',
      'yesterday',
      '20/11/2026',
      '2026-02-30',
      '2026-13-01T00:00:00',
      '2026-11-20T24:00:01',
      '2026-11-20T24:01',
      '2026-11-20T24:00:00.001Z',
      '2026-11-20T14:58:61Z',
      '2026-11-20T14:05:00+23:60',
      '2026-11-20T14:05:00+25',
    ]) {
      expect(readCheckpointTime(text)).toBeUndefined();
    }
  });

  it('names, for every country of the table, a zone Node knows, and reads alpha-3 codes as alpha-2', () => {
    for (const [alpha2, [alpha3, zone]] of Object.entries(COUNTRY_ZONES)) {
      expect(() => new Intl.DateTimeFormat('en', { timeZone: zone })).not.toThrow();
      expect(countryAlpha2(alpha3)).toBe(alpha2);
      expect(countryAlpha2(alpha2.toLowerCase())).toBe(alpha2);
      // The country codes a feed's body is read with are assigned ones, as a registration's are (domain/field-schemas.ts).
      expect([alpha2, ASSIGNED_COUNTRY_CODES.includes(alpha2), countries.alpha2ToAlpha3(alpha2)]).toEqual([alpha2, true, alpha3]);
    }
    expect(countryAlpha2('UK')).toBeUndefined();
    expect(countryZone('USA')).toBe('America/New_York');
    expect(countryZone('DEU')).toBe('Europe/Berlin');
  });
});
