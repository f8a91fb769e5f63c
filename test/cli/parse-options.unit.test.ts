// A command's options are checked with zod (cli/admin/context.ts parseOptions) and a bad one is
// worded as the API words a bad field (domain/field-errors.ts), after the option's own name.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { parseOptions } from '../../cli/admin/context.js';
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

  it('says a coerced number option given text must be a number, not what zod coerced it to (NaN)', () => {
    expect(failure(z.object({ batchSize: z.coerce.number().int().min(1) }), { batchSize: 'abc' })).toBe(
      'invalid --batch-size: must be a number',
    );
  });
});
