// The real components are found, or start-up stops with a message saying what to install; and
// configuration is checked once, naming the variable that is wrong.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { CONFIG_VARIABLES, loadConfig, parseDuration, publicBaseUrl } from '../../platform/config.js';
import { startPostgres } from '../../devtools/postgres.js';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { resolveTestServer } from '../../devtools/test-server.js';
import { MissingComponentError } from '../../devtools/tool-cache.js';

const saved = { ...process.env };
let emptyCache: string;

beforeEach(() => {
  emptyCache = mkdtempSync(path.join(tmpdir(), 'cds-empty-cache-'));
});

afterEach(() => {
  process.env = { ...saved };
  rmSync(emptyCache, { recursive: true, force: true });
});

describe('component resolution', () => {
  it('uses TEMPORAL_CLI_PATH when it names an executable', async () => {
    process.env.TEMPORAL_CLI_PATH = process.execPath;
    await expect(resolveTemporalCli()).resolves.toBe(process.execPath);
  });

  it('refuses a TEMPORAL_CLI_PATH that is not an executable, naming the variable', async () => {
    process.env.TEMPORAL_CLI_PATH = '/nonexistent/temporal';
    await expect(resolveTemporalCli()).rejects.toThrow(/TEMPORAL_CLI_PATH=\/nonexistent\/temporal is not an executable/);
  });

  it('says what to install when no Temporal CLI, cache, pip or Go is available', async () => {
    delete process.env.TEMPORAL_CLI_PATH;
    process.env.PATH = '';
    process.env.CDS_TOOL_CACHE = emptyCache;
    const failure = resolveTemporalCli();
    await expect(failure).rejects.toBeInstanceOf(MissingComponentError);
    await expect(failure).rejects.toThrow(
      /Install it .*put `temporal` on PATH, or set TEMPORAL_CLI_PATH, or make pip \(PyPI\) or Go available/,
    );
  });

  it('says what to install when the test server has no Java or Maven to come from', () => {
    delete process.env.TEMPORAL_TEST_SERVER_PATH;
    process.env.PATH = '';
    process.env.CDS_TOOL_CACHE = emptyCache;
    expect(() => resolveTestServer()).toThrow(/needs Java 17\+ and Maven.*or set TEMPORAL_TEST_SERVER_PATH/);
  });

  it('uses DATABASE_URL as it is, starting no embedded Postgres', async () => {
    process.env.DATABASE_URL = 'postgres://u:p@db.example:5432/cds';
    const pg = await startPostgres({ dataDir: path.join(emptyCache, 'unused') });
    expect(pg).toMatchObject({ url: 'postgres://u:p@db.example:5432/cds', source: 'DATABASE_URL' });
  });
});

describe('configuration', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      PORT: 3000,
      TEMPORAL_NAMESPACE: 'default',
      RATE_LIMIT_PER_MINUTE: 1000,
      WEBHOOK_RETRY_SCHEDULE: [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000],
      WEBHOOK_TIMEOUT_MS: 5000,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
      PREDICTION_REFRESH_INTERVAL: 3_600_000,
      LOG_LEVEL: 'info',
    });
  });

  it('reads every variable DESIGN.md names with its default, and docs/configuration.md states the same default', () => {
    // DESIGN.md §5, §6 (OVERDUE_BUSINESS_DAYS), §7 (WORKER_METRICS_PORT), §8 (WEBHOOK_AUTO_DISABLE_AFTER),
    // §9–§11: the default as DESIGN writes it (and as the docs' table must), and as the config reads it.
    const design: Array<[string, string, unknown]> = [
      ['PORT', '3000', 3000],
      ['TEMPORAL_NAMESPACE', 'default', 'default'],
      ['RATE_LIMIT_PER_MINUTE', '1000', 1000],
      ['WEBHOOK_RETRY_SCHEDULE', '1m,5m,30m,2h,8h', [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000]],
      ['WEBHOOK_TIMEOUT_MS', '5000', 5000],
      ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'false', false],
      ['PREDICTION_REFRESH_INTERVAL', '1h', 3_600_000],
      ['TRACKING_PAGE_RATE_PER_MINUTE', '60', 60],
      ['FEED_RATE_PER_MINUTE', '6000', 6000],
      ['RETENTION_DISPATCH', '180d', 180 * 86_400_000],
      ['RETENTION_WEBHOOK_PAYLOAD', '30d', 30 * 86_400_000],
      ['RETENTION_TRANSIT_HISTORY', '800d', 800 * 86_400_000],
      ['OVERDUE_BUSINESS_DAYS', '10', 10],
      ['WORKER_METRICS_PORT', '9464', 9464],
      ['WEBHOOK_AUTO_DISABLE_AFTER', '5d', 5 * 86_400_000],
    ];
    const config = loadConfig({}) as unknown as Record<string, unknown>;
    expect(Object.fromEntries(design.map(([name]) => [name, config[name]]))).toEqual(Object.fromEntries(design.map(([name, , value]) => [name, value]))); // prettier-ignore
    // Named without a default: read by the config all the same (DATABASE_URL, TEMPORAL_ADDRESS unset: embedded, dev server).
    const named = [
      'DATABASE_URL',
      'TEMPORAL_ADDRESS',
      'TEMPORAL_TASK_QUEUE',
      'LOG_LEVEL',
      'PUBLIC_BASE_URL',
      ...design.map(([name]) => name),
    ];
    expect(named.filter((name) => !CONFIG_VARIABLES.includes(name))).toEqual([]);
    expect(publicBaseUrl(loadConfig({ PORT: '4321' }))).toBe('http://localhost:4321');
    // The docs' table: a row naming the variable whose default cell states DESIGN's default.
    const rows = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    const documented = (name: string) => rows.find(([, names]) => names.split(/, | \/ /).includes(`\`${name}\``));
    const wrong = design.filter(
      ([name, text]) =>
        !documented(name)?.[2]
          .split(/, | \/ /)
          .some((d) => d.startsWith(`\`${text}\``)),
    );
    expect(wrong.map(([name, text]) => `${name} (${text})`)).toEqual([]);
    expect(['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_TASK_QUEUE', 'LOG_LEVEL', 'PUBLIC_BASE_URL', 'TEMPORAL_CLI_PATH', 'OTEL_EXPORTER_OTLP_ENDPOINT'].filter((name) => !documented(name))).toEqual([]); // prettier-ignore
  });

  it('stops on a bad value with a message naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1m,soon' })).toThrow(
      'invalid configuration: WEBHOOK_RETRY_SCHEDULE: must be durations separated by commas, e.g. 1m,5m,30m,2h,8h (units ms, s, m, h, d), got "1m,soon"',
    );
    expect(() => loadConfig({ API_KEY_CACHE_TTL_MS: '60000' })).toThrow(/API_KEY_CACHE_TTL_MS/);
  });

  it('reads durations in ms, s, m, h and d', () => {
    expect(['250ms', '30s', '5m', '2h', '1d'].map(parseDuration)).toEqual([250, 30_000, 300_000, 7_200_000, 86_400_000]);
  });
});
