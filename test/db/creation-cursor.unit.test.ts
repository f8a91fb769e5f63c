// The cursors of the API's lists (db/creation-cursor.ts): what a list's cursor encodes decodes to
// the same position; nothing else decodes, neither another list's cursor nor arbitrary text.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { creationCursors } from '../../db/creation-cursor.js';
import { idPattern, newId } from '../../db/ids.js';

const createdAt = fc
  .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
  .chain((date) => fc.integer({ min: 0, max: 999 }).map((micros) => date.toISOString().replace(/Z$/, `${String(micros).padStart(3, '0')}Z`))); // prettier-ignore

describe('a creation-order cursor', () => {
  const feeds = creationCursors(idPattern('fd'));
  const events = creationCursors(idPattern('evt'));

  it('decodes to the position it encodes, to the microsecond', () => {
    fc.assert(
      fc.property(createdAt, (at) => {
        const cursor = { createdAt: at, id: newId('fd') };
        expect(feeds.decode(feeds.encode(cursor))).toEqual(cursor);
      }),
    );
  });

  it("refuses another list's cursor and any text it did not make", () => {
    expect(feeds.decode(events.encode({ createdAt: '2026-11-28T10:00:00.123456Z', id: newId('evt') }))).toBeUndefined();
    fc.assert(fc.property(fc.string(), (text) => expect(feeds.decode(text)).toBeUndefined()));
    fc.assert(
      fc.property(createdAt, fc.string(), (at, id) => {
        fc.pre(!/^fd_[0-9A-Za-z]{16}$/.test(id));
        expect(feeds.decode(Buffer.from(`${at}|${id}`).toString('base64url'))).toBeUndefined();
      }),
    );
  });

  it.each(['2026-02-30T10:00:00.000000Z', '2026-11-28T24:00:00.000000Z', '2026-11-28T10:60:00.000000Z', '0000-01-01T00:00:00.000000Z'])(
    'refuses a cursor whose time %s is no instant Postgres takes',
    (at) => {
      expect(feeds.decode(Buffer.from(`${at}|${newId('fd')}`).toString('base64url'))).toBeUndefined();
    },
  );
});
