// api/fingerprint.ts: a registration's fingerprint names the same instant of dispatch_date the same
// way however it was written, and a fingerprint stored before that (dispatch_date as it was sent)
// compares equal to today's for the same body, so a retry across the upgrade is not a 409.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { canonicalJson } from '../../domain/canonical-json.js';
import type { Registration } from '../../domain/dispatch-schemas.js';
import { normalisedFingerprint, registrationFingerprint } from '../../api/fingerprint.js';

const body = (dispatchDate: string): Registration => ({
  id: undefined,
  dispatch_date: dispatchDate,
  destination: { postal_code: '75011', country_code: 'FR' },
  reference: 'ref-1',
});

/** `instant` written with the given offset in minutes and with or without milliseconds. */
function written(instant: number, offsetMinutes: number, millis: boolean): string {
  const local = new Date(instant + offsetMinutes * 60_000).toISOString().slice(0, millis ? 23 : 19);
  if (offsetMinutes === 0) return `${local}Z`;
  const sign = offsetMinutes > 0 ? '+' : '-';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

describe('registrationFingerprint', () => {
  it('is the same for one instant written with any offset, with or without milliseconds, and differs for another instant', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }).map((ms) => ms - (ms % 1000)),
        fc.integer({ min: -14 * 60, max: 14 * 60 }),
        fc.boolean(),
        (instant, offset, millis) => {
          const canonical = registrationFingerprint(body(new Date(instant).toISOString()));
          expect(registrationFingerprint(body(written(instant, offset, millis)))).toBe(canonical);
          expect(registrationFingerprint(body(new Date(instant + 1000).toISOString()))).not.toBe(canonical);
        },
      ),
    );
  });

  it('equals, for the same body, a fingerprint stored before the instant was normalised', () => {
    const sent = '2026-12-01T09:30:00+01:00';
    const storedBefore = canonicalJson(body(sent)); // what the projection holds from then
    expect(normalisedFingerprint(storedBefore)).toBe(registrationFingerprint(body('2026-12-01T08:30:00.000Z')));
    expect(normalisedFingerprint(JSON.parse(storedBefore))).toBe(registrationFingerprint(body(sent)));
    expect(normalisedFingerprint(canonicalJson({ destination: body(sent).destination }))).toBe(
      registrationFingerprint({ id: undefined, destination: body(sent).destination }),
    );
  });
});
