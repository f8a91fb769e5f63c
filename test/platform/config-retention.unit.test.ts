// The retention windows (docs/privacy.md "What is kept, and for how long"): RETENTION_DISPATCH,
// RETENTION_WEBHOOK_PAYLOAD and RETENTION_TRANSIT_HISTORY, each a duration or `never`, checked at start-up;
// and the sweep's pause between two batches, RETENTION_BATCH_PAUSE (docs/configuration.md).
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

  it.each(NAMES)(
    '%s longer than 100 years stops start-up naming it (the sweep could not subtract it from now): never keeps forever',
    (name) => {
      expect(loadConfig({ [name]: '36500d' })[name]).toBe(36_500 * DAY);
      for (const value of ['36501d', '10000000d', '999999999999999h']) {
        expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: must be at most 36500d .*never keeps forever`));
      }
    },
  );

  it.each(NAMES)('%s that is neither a duration nor never stops start-up naming it', (name) => {
    for (const value of ['', '180', 'forever', '-1d', '1y']) {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: must be a duration.*or never`));
    }
  });
});

describe('RETENTION_BATCH_PAUSE', () => {
  it('defaults to 500 ms, and takes a duration up to 30 s (0ms: no pause)', () => {
    expect(loadConfig({}).RETENTION_BATCH_PAUSE).toBe(500);
    expect(loadConfig({ RETENTION_BATCH_PAUSE: '0ms' }).RETENTION_BATCH_PAUSE).toBe(0);
    expect(loadConfig({ RETENTION_BATCH_PAUSE: '2s' }).RETENTION_BATCH_PAUSE).toBe(2_000);
    expect(loadConfig({ RETENTION_BATCH_PAUSE: '30s' }).RETENTION_BATCH_PAUSE).toBe(30_000);
  });

  it('longer than 30 s (the sweep heartbeats once a batch, its timeout a minute) or not a duration stops start-up naming it', () => {
    expect(() => loadConfig({ RETENTION_BATCH_PAUSE: '31s' })).toThrow(/RETENTION_BATCH_PAUSE: must be at most 30s/);
    for (const value of ['', '250', 'never', '-1s']) {
      expect(() => loadConfig({ RETENTION_BATCH_PAUSE: value })).toThrow(/RETENTION_BATCH_PAUSE: must be a duration/);
    }
  });
});
