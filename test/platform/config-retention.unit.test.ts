// The retention windows (docs/privacy.md "What is kept, and for how long"): RETENTION_DISPATCH,
// RETENTION_WEBHOOK_PAYLOAD and RETENTION_TRANSIT_HISTORY, each a duration or `never`, checked at start-up.
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../platform/config.js';

const DAY = 86_400_000;
const NAMES = ['RETENTION_DISPATCH', 'RETENTION_WEBHOOK_PAYLOAD', 'RETENTION_TRANSIT_HISTORY'] as const;

describe('retention windows', () => {
  it('default to 180, 30 and 800 days', () => {
    const config = loadConfig({});
    expect([config.RETENTION_DISPATCH, config.RETENTION_WEBHOOK_PAYLOAD, config.RETENTION_TRANSIT_HISTORY]).toEqual([
      180 * DAY,
      30 * DAY,
      800 * DAY,
    ]);
  });

  it.each(NAMES)('%s takes a duration in seconds, so a test can use short windows', (name) => {
    expect(loadConfig({ [name]: '30s' })[name]).toBe(30_000);
    expect(loadConfig({ [name]: '10m' })[name]).toBe(600_000);
  });

  it.each(NAMES)('%s set to never keeps forever (null)', (name) => {
    expect(loadConfig({ [name]: 'never' })[name]).toBeNull();
  });

  it.each(NAMES)('%s that is neither a duration nor never stops start-up naming it', (name) => {
    for (const value of ['', '180', 'forever', '-1d', '1y']) {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: not a duration.*or never`));
    }
  });
});
