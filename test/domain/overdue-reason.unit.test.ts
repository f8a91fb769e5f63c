// The exception reason `overdue` is the service's own (docs/states.md "Overdue"): a dispatch can
// hold it, and its messages render it, but a carrier event cannot carry it.
import { describe, expect, it } from '@jest/globals';
import { carrierEventBody } from '../../domain/carrier-event-schemas.js';

describe('the overdue exception reason', () => {
  it('is refused in a carrier event body, naming the reason field', () => {
    const parsed = carrierEventBody.safeParse({ status: 'exception', occurred_at: '2026-11-24T10:00:00Z', reason: 'overdue' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['reason']);
  });
});
