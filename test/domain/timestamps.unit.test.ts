// What the API takes as a timestamp (domain/field-schemas.ts `isoTimestamp`, docs/http-contract.md
// "Input bounds and integrity promises"): every RFC 3339 date-time with an offset, as the instant it
// names, and for everything else a message in the terms of the mistake, never one that calls an
// RFC 3339 timestamp something it is not.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isoTimestamp, toUtc } from '../../domain/field-schemas.js';

const RULE = 'must be an RFC 3339 timestamp with a time and an offset (Z or ±hh:mm), e.g. 2026-12-07T09:30:00Z';
const messageFor = (text: string) => {
  const parsed = isoTimestamp.safeParse(text);
  return parsed.success ? undefined : parsed.error.issues[0].message;
};
/** The OpenAPI document's pattern for the field, as a validator in another language reads it. */
const documentPattern = new RegExp(isoTimestamp.meta()!.pattern as string);

// Years 1000–9999: the field's own four digits, without Date's extended ±yyyyyy form.
const instants = fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });

describe('RFC 3339 §5.6 allows a lower-case "t" and "z"', () => {
  it('takes any instant written with a lower-case t and z, as the instant it names, and so does the document', () => {
    fc.assert(
      fc.property(instants, fc.boolean(), fc.boolean(), (instant, lowerT, lowerZ) => {
        let text = instant.toISOString();
        if (lowerT) text = text.replace('T', 't');
        if (lowerZ) text = text.replace('Z', 'z');
        expect(isoTimestamp.safeParse(text).success).toBe(true);
        expect(documentPattern.test(text)).toBe(true);
        expect(toUtc(text)).toBe(instant.toISOString());
      }),
    );
  });

  it('takes "2026-12-07t10:00:00+02:00" as 08:00 UTC', () => {
    expect(isoTimestamp.safeParse('2026-12-07t10:00:00+02:00').success).toBe(true);
    expect(toUtc('2026-12-07t10:00:00+02:00')).toBe('2026-12-07T08:00:00.000Z');
  });
});

describe('fractional seconds', () => {
  it('takes nine digits of fractional seconds, keeping the milliseconds', () => {
    expect(isoTimestamp.safeParse('2026-12-07T10:00:00.123456789Z').success).toBe(true);
    expect(toUtc('2026-12-07T10:00:00.123456789Z')).toBe('2026-12-07T10:00:00.123Z');
  });
});

describe('a refusal says what is wrong in the terms of the mistake', () => {
  it.each([
    ['a leap second', '2016-12-31T23:59:60Z', `${RULE}: a leap second (:60) is not taken; write :59`],
    ['a leap second with an offset', '2016-12-31T18:59:60-05:00', `${RULE}: a leap second (:60) is not taken; write :59`],
    ['ISO 8601 basic format, a date', '20261207', `${RULE}: ISO 8601's basic format (no "-" and ":") is not taken`],
    ['ISO 8601 basic format, a timestamp', '20261207T100000Z', `${RULE}: ISO 8601's basic format (no "-" and ":") is not taken`],
    ['a space between date and time', '2026-12-07 10:00:00Z', `${RULE}: separate the date and the time with "T", not a space`],
    ['a day that no calendar has', '2026-02-30T10:00:00Z', `${RULE}: 2026-02-30T10:00:00 is not a date and time of the calendar`],
    ['hour 24', '2026-12-07T24:00:00Z', `${RULE}: 2026-12-07T24:00:00 is not a date and time of the calendar`],
    ['a date alone', '2026-12-07', `${RULE}: a date alone is not a timestamp`],
    ['a time without offset', '2026-12-07T10:00:00', `${RULE}: it has no offset (add Z for UTC, or the local offset such as +05:30)`],
    [
      'a lower-case time without offset',
      '2026-12-07t10:00:00.5',
      `${RULE}: it has no offset (add Z for UTC, or the local offset such as +05:30)`,
    ],
  ])('refuses %s (%s)', (_, text, message) => {
    expect(messageFor(text)).toBe(message);
  });

  it('refuses what is no timestamp at all with the rule alone', () => {
    expect(messageFor('yesterday')).toBe(RULE);
  });
});
