// The cursor of GET /v1/dispatches/{id}/events (db/carrier-events.ts): what it encodes decodes to the
// same position; anything else decodes to undefined (the route's 400 naming `cursor`), never to a
// position Postgres would refuse (a day no calendar has, year 0000, a NUL in the key: a 500 before).
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decodeCarrierEventCursor, encodeCarrierEventCursor } from '../../db/carrier-events.js';

const receivedAt = fc
  .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
  .chain((date) => fc.integer({ min: 0, max: 999 }).map((micros) => date.toISOString().replace(/Z$/, `${String(micros).padStart(3, '0')}Z`))); // prettier-ignore
const dedupeKey = fc.string({ minLength: 1, unit: 'grapheme' }).filter((key) => !key.includes('\u0000'));

/** A position Postgres takes: an instant of the calendar as written (years 0001 to 9999), and a key without NUL. */
function postgresSafe(cursor: { receivedAt: string; dedupeKey: string }): boolean {
  const at = cursor.receivedAt;
  const ms = Date.parse(at);
  return (
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(at) &&
    !at.startsWith('0000') &&
    new Date(ms).toISOString().slice(0, 23) === at.slice(0, 23) &&
    cursor.dedupeKey.length > 0 &&
    !cursor.dedupeKey.includes('\u0000')
  );
}

describe('a carrier event cursor', () => {
  it('decodes to the position it encodes, to the microsecond', () => {
    fc.assert(
      fc.property(receivedAt, dedupeKey, (at, key) => {
        const cursor = { receivedAt: at, dedupeKey: key };
        expect(decodeCarrierEventCursor(encodeCarrierEventCursor(cursor))).toEqual(cursor);
      }),
    );
  });

  it('decodes any text to a position Postgres takes, or to nothing', () => {
    const tampered = fc.tuple(receivedAt, fc.string()).map(([at, key]) => Buffer.from(`${at}|${key}`).toString('base64url'));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), tampered), (text) => {
        const cursor = decodeCarrierEventCursor(text);
        expect(cursor === undefined || postgresSafe(cursor)).toBe(true);
      }),
    );
  });

  it.each([
    ['a day no calendar has', '2026-02-30T00:00:00.000000Z|x'],
    ['24:00', '2026-11-28T24:00:00.000000Z|x'],
    ['a 60th minute', '2026-11-28T10:60:00.000000Z|x'],
    ['year 0000', '0000-01-01T00:00:00.000000Z|x'],
    ['a NUL in the key', '2026-01-01T00:00:00.000000Z|a\u0000b'],
    ['no key', '2026-01-01T00:00:00.000000Z|'],
  ])('refuses a cursor with %s', (_name, text) => {
    expect(decodeCarrierEventCursor(Buffer.from(text).toString('base64url'))).toBeUndefined();
  });
});
