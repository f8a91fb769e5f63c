// OVERDUE_BUSINESS_DAYS (docs/states.md "Overdue"): how many business days after its window's max
// a card not delivered enters exception `overdue`. Read and checked once at start-up.
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../platform/config.js';

describe('OVERDUE_BUSINESS_DAYS', () => {
  it('is 10 business days by default', () => {
    expect(loadConfig({}).OVERDUE_BUSINESS_DAYS).toBe(10);
  });

  it('takes a whole number of business days from the environment', () => {
    expect(loadConfig({ OVERDUE_BUSINESS_DAYS: '15' }).OVERDUE_BUSINESS_DAYS).toBe(15);
  });

  it.each(['0', '-3', '2.5', 'ten', '1000'])('stops start-up on %s with a message naming the variable', (value) => {
    expect(() => loadConfig({ OVERDUE_BUSINESS_DAYS: value })).toThrow(/OVERDUE_BUSINESS_DAYS/);
  });
});
