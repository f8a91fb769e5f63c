// `deliveries replay --endpoint ID --since T --until T` (cli/admin/delivery-commands.ts): the range is
// taken when `since` is an earlier instant than `until`, whatever offsets or fractions of a second the
// two ISO 8601 timestamps are written with, and refused otherwise.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { replayOptions } from '../../cli/admin/delivery-commands.js';

/** The instant written with an offset of `minutes` (±23:59), to the millisecond or whole seconds. */
function written(ms: number, minutes: number, withMillis: boolean): string {
  const local = new Date(ms + minutes * 60_000).toISOString().replace('Z', '');
  const text = withMillis ? local : local.slice(0, 19);
  if (minutes === 0) return `${text}Z`;
  const abs = Math.abs(minutes);
  return `${text}${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

describe('deliveries replay --since/--until', () => {
  it('takes the range exactly when since is an earlier instant than until, in any offsets', () => {
    const base = Date.parse('2026-11-01T00:00:00Z');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 * 86_400_000 }),
        fc.integer({ min: 0, max: 3 * 86_400_000 }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        fc.boolean(),
        (a, b, sinceOffset, untilOffset, withMillis) => {
          const [since, until] = withMillis ? [base + a, base + b] : [base + a - (a % 1000), base + b - (b % 1000)];
          const parsed = replayOptions.safeParse({
            endpoint: 'whe_0000000000000000',
            since: written(since, sinceOffset, withMillis),
            until: written(until, untilOffset, withMillis),
          });
          expect(parsed.success).toBe(since < until);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('takes 10:00+05:00 to 06:00Z, an hour, and refuses 06:00Z to 08:00+05:00, which ends before it starts', () => {
    const range = (since: string, until: string) => replayOptions.safeParse({ endpoint: 'whe_0000000000000000', since, until }).success;
    expect(range('2026-11-01T10:00:00+05:00', '2026-11-01T06:00:00Z')).toBe(true);
    expect(range('2026-11-01T06:00:00Z', '2026-11-01T08:00:00+05:00')).toBe(false);
    expect(range('2026-11-01T06:00:00.500Z', '2026-11-01T06:00:00Z')).toBe(false);
  });
});
