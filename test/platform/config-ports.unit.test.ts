// The port variables (docs/configuration.md): `PORT` 1–65535, as no operator means "a random port"
// for the API; `WORKER_METRICS_PORT` 0–65535 (0 picks any free port, for tests);
// `DEMO_WEBHOOK_PORT`, `TEMPORAL_DEV_SERVER_PORT` and `TEMPORAL_DEV_SERVER_UI_PORT` 1–65535 (npm start's
// own servers, whose ports it names in URLs and messages). A port refused is the one start-up line
// naming the variable and its range, as for any bad value.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../platform/config.js';

/** The start-up line for `env`, or undefined when it is accepted. */
function refusal(env: NodeJS.ProcessEnv): string | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
}

const PORTS: Array<[variable: string, min: 0 | 1, byDefault: number]> = [
  ['PORT', 1, 3000],
  ['WORKER_METRICS_PORT', 0, 9464],
  ['DEMO_WEBHOOK_PORT', 1, 4100],
  ['TEMPORAL_DEV_SERVER_PORT', 1, 7233],
  ['TEMPORAL_DEV_SERVER_UI_PORT', 1, 8233],
];

describe('port variables', () => {
  it('refuses PORT=0 (a random port) with the line naming PORT and its range', () => {
    expect(refusal({ PORT: '0' })).toBe('invalid configuration: PORT: must be a whole number 1–65535, got "0"');
    expect(refusal({ PORT: '00' })).toBe('invalid configuration: PORT: must be a whole number 1–65535, got "00"');
  });

  it('keeps WORKER_METRICS_PORT=0 (any free port, for tests)', () => {
    expect(loadConfig({ WORKER_METRICS_PORT: '0' }).WORKER_METRICS_PORT).toBe(0);
  });

  it('refuses a bad TEMPORAL_DEV_SERVER_PORT or TEMPORAL_DEV_SERVER_UI_PORT at start-up, naming it, as any other', () => {
    for (const variable of ['TEMPORAL_DEV_SERVER_PORT', 'TEMPORAL_DEV_SERVER_UI_PORT']) {
      for (const value of ['abc', '', '0', '65536', '7233 ']) {
        expect(refusal({ [variable]: value })).toBe(`invalid configuration: ${variable}: must be a whole number 1–65535, got ${JSON.stringify(value)}`); // prettier-ignore
      }
    }
  });

  it('takes each port in its range, its default when unset, and refuses anything else naming the variable and the range', () => {
    for (const [variable, min, byDefault] of PORTS) {
      expect((loadConfig({}) as Record<string, unknown>)[variable]).toBe(byDefault);
      fc.assert(
        fc.property(fc.oneof(fc.nat({ max: 70_000 }).map(String), fc.string({ maxLength: 7 })), (value) => {
          const port = /^[0-9]+$/.test(value) ? Number(value) : undefined;
          const accepted = port !== undefined && port >= min && port <= 65535;
          if (accepted) expect((loadConfig({ [variable]: value }) as Record<string, unknown>)[variable]).toBe(port);
          else expect(refusal({ [variable]: value })).toBe(`invalid configuration: ${variable}: must be a whole number ${min}–65535, got ${JSON.stringify(value)}`); // prettier-ignore
        }),
        { numRuns: 300 },
      );
    }
  });
});
