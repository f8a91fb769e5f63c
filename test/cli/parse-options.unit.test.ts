// A command's options are checked with zod (cli/admin/context.ts parseOptions) and a bad one is
// worded as the API words a bad field (domain/field-errors.ts), after the option's own name.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { z } from 'zod';
import { parseOptions, wholeNumberOption } from '../../cli/admin/context.js';
import { replayOptions } from '../../cli/admin/delivery-commands.js';

const failure = (schema: z.ZodType, options: unknown) => {
  try {
    parseOptions(schema, options);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe('parseOptions', () => {
  it('says a timestamp option must be an ISO 8601 timestamp, naming the option', () => {
    expect(failure(replayOptions, { endpoint: 'whe_0000000000000000', since: 'yesterday', until: '2026-11-01T06:00:00Z' })).toMatch(
      /^invalid --since: must be an ISO 8601 timestamp/,
    );
  });

  it('says a missing option is required', () => {
    expect(failure(z.object({ issuerId: z.string() }), {})).toBe('invalid --issuer-id: is required');
  });

  it('says the bound of a number out of range', () => {
    expect(failure(z.object({ delayDays: z.number().int().max(60) }), { delayDays: 61 })).toBe('invalid --delay-days: must be at most 60');
  });

  it('takes a whole-number option only in decimal digits within its range, and otherwise says so in one rule, for any text', () => {
    const schema = z.object({ limit: wholeNumberOption(1, 1000) });
    const text = fc.oneof(fc.string(), fc.integer({ min: -10, max: 2000 }).map(String), fc.constantFrom('1e1', '0x10', ' 5', '5 ', '2.0'));
    fc.assert(
      fc.property(text, (value) => {
        const valid = /^[0-9]+$/.test(value) && Number(value) >= 1 && Number(value) <= 1000;
        if (valid) expect(parseOptions(schema, { limit: value })).toEqual({ limit: Number(value) });
        else expect(failure(schema, { limit: value })).toBe('invalid --limit: must be a whole number 1–1000');
      }),
    );
  });
});
