// How bad configuration reads (docs/configuration.md "When a process does not start"):
// whatever variable is bad and whatever it holds, one line `invalid configuration: VARIABLE: problem`,
// in the service's words (`must be …`, `is required …`), never zod's ("Invalid input", "expected
// number"), and never the value of a secret.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CONFIG_VARIABLES, ConfigError, loadConfig, publicBaseUrl } from '../../platform/config.js';

/** What loadConfig throws for `env`, or undefined when the environment is accepted. */
function failure(env: NodeJS.ProcessEnv): ConfigError | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
}

const ZOD_WORDING = /Invalid|expected|received|Too (big|small)|NaN/;

describe('configuration messages', () => {
  it('name the variable on one line in the service’s words, for every variable and any value refused', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CONFIG_VARIABLES),
        fc.oneof(fc.string(), fc.constantFrom('', 'abc', '-1', '1.5', '1e9', '70000', 'yes', 'http//x', '1m,soon', '0', '1')),
        (variable, value) => {
          const error = failure({ [variable]: value });
          if (!error) return;
          expect(error.message).not.toContain('\n');
          // The variable itself, or the one it needs (a TLS certificate without its key names the key).
          expect(error.message).toMatch(/^invalid configuration: [A-Z_]+: (must|is) /);
          expect(error.message).toContain(variable);
          expect(error.message).not.toMatch(ZOD_WORDING);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('show the value refused, quoted and cut to 100 characters', () => {
    expect(failure({ PORT: 'abc' })!.message).toBe('invalid configuration: PORT: must be a whole number 1–65535, got "abc"');
    expect(failure({ PORT: '1\n2' })!.message).toBe('invalid configuration: PORT: must be a whole number 1–65535, got "1\\n2"');
    expect(failure({ LOG_LEVEL: 'x'.repeat(150) })!.message).toContain(`got "${'x'.repeat(100)}…"`);
  });

  it('refuse a number variable that is empty or not written in decimal digits, rather than reading "" as 0 (a random port) or 1e3 as 1000', () => {
    for (const value of ['', ' ', '1e3', '0x10', '3000 ', '+3000', '3_000']) {
      expect(failure({ PORT: value })?.message).toBe(
        `invalid configuration: PORT: must be a whole number 1–65535, got ${JSON.stringify(value)}`,
      );
    }
    expect(loadConfig({ PORT: '08080' }).PORT).toBe(8080);
    for (const variable of ['WORKER_MAX_CACHED_WORKFLOWS', 'WORKER_NONSTICKY_POLL_RATIO', 'WORKER_METRICS_PORT']) {
      for (const value of ['', ' ', '1e3', '0x10'])
        expect(failure({ [variable]: value })?.message).toMatch(new RegExp(`^invalid configuration: ${variable}: must `));
    }
    expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' }).WORKER_MAX_CACHED_WORKFLOWS).toBe(0);
    expect(loadConfig({ WORKER_NONSTICKY_POLL_RATIO: '.5' }).WORKER_NONSTICKY_POLL_RATIO).toBe(0.5);
    expect(loadConfig({ WORKER_NONSTICKY_POLL_RATIO: '1' }).WORKER_NONSTICKY_POLL_RATIO).toBe(1);
  });

  it('never show the value of DATABASE_URL, TEMPORAL_API_KEY or a URL with a password', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9]{8,30}$/), (secret) => {
        for (const env of [
          { DATABASE_URL: `postgres://cds:${secret}@db host/cds` },
          { DATABASE_URL: `${secret}@db` },
          { TEMPORAL_API_KEY: secret, TEMPORAL_TLS: 'false' },
          { PUBLIC_BASE_URL: `ftp://user:${secret}@cards.example.com` },
        ]) {
          const error = failure(env);
          expect(error).toBeDefined();
          expect(error!.message).not.toContain(secret);
          expect(error!.message).toMatch(/^invalid configuration: \w+: /);
        }
      }),
    );
  });

  it('refuses a prediction refresh interval under a second, and dashboard session lifetimes of zero, naming the variable', () => {
    // A Schedule every 0 s cannot be made, and a status answer's max-age is derived from the interval;
    // a session that lives no time signs nobody in.
    for (const [variable, value, problem] of [
      ['PREDICTION_REFRESH_INTERVAL', '0s', 'must be at least 1s'],
      ['PREDICTION_REFRESH_INTERVAL', '500ms', 'must be at least 1s'],
      ['DASHBOARD_SESSION_IDLE', '0m', 'must be more than 0'],
      ['DASHBOARD_SESSION_MAX', '0h', 'must be more than 0'],
    ] as const) {
      expect(failure({ [variable]: value })?.message).toBe(`invalid configuration: ${variable}: ${problem}, got "${value}"`);
    }
    expect(loadConfig({ PREDICTION_REFRESH_INTERVAL: '1s' }).PREDICTION_REFRESH_INTERVAL).toBe(1000);
  });

  it('refuses values that start up and then break every request: a webhook timeout past the attempt’s 1-minute run, a rate limit past a Postgres integer, a session past a year, a public base URL that is not an origin', () => {
    // WEBHOOK_TIMEOUT_MS: an attempt waits up to 30 s for its throttle slot, then posts, inside an
    // activity run of at most a minute; a longer timeout makes Temporal run the same attempt twice.
    // Rate limits are counted in an integer column; a session is subtracted from now() in Postgres.
    for (const [variable, value, problem] of [
      ['WEBHOOK_TIMEOUT_MS', '25001', 'must be a whole number 1–25000'],
      ['RATE_LIMIT_PER_MINUTE', '3000000000', 'must be a whole number 1–1000000000'],
      ['RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE', '2147483648', 'must be a whole number 1–1000000000'],
      ['TRACKING_PAGE_RATE_PER_MINUTE', '1000000001', 'must be a whole number 1–1000000000'],
      ['FEED_RATE_PER_MINUTE', '99999999999', 'must be a whole number 1–1000000000'],
      ['DASHBOARD_SESSION_IDLE', '366d', 'must be at most 365d'],
      ['DASHBOARD_SESSION_MAX', '3650000d', 'must be at most 365d'],
      [
        'PUBLIC_BASE_URL',
        'https://cards.example.com/?utm=x',
        'must be an origin, e.g. https://cards.example.com (no path, query or fragment)',
      ],
      [
        'PUBLIC_BASE_URL',
        'https://cards.example.com/track',
        'must be an origin, e.g. https://cards.example.com (no path, query or fragment)',
      ],
      ['PUBLIC_BASE_URL', 'https://cards.example.com#x', 'must be an origin, e.g. https://cards.example.com (no path, query or fragment)'],
    ] as const) {
      expect(failure({ [variable]: value })?.message).toBe(`invalid configuration: ${variable}: ${problem}, got "${value}"`);
    }
    const accepted = loadConfig({
      WEBHOOK_TIMEOUT_MS: '25000',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      DASHBOARD_SESSION_MAX: '365d',
      PUBLIC_BASE_URL: 'https://cards.example.com/',
    });
    expect(accepted.WEBHOOK_TIMEOUT_MS).toBe(25_000);
    expect(accepted.RATE_LIMIT_PER_MINUTE).toBe(1_000_000_000);
    expect(accepted.DASHBOARD_SESSION_MAX).toBe(365 * 86_400_000);
    expect(publicBaseUrl(accepted)).toBe('https://cards.example.com');
    expect(publicBaseUrl(loadConfig({ PUBLIC_BASE_URL: 'http://localhost:8080' }))).toBe('http://localhost:8080');
  });
});
