// The real API for the auth-flood benchmark, in its own process: `startApi` with the whole chain,
// configured by the parent's env (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
// API_KEY_CACHE_TTL_MS as in production), logging off. Its pg pool is the real one with a counting
// wrapper around `pool.query` (every query still runs): each statement is tallied by what it does
// (key lookup, rate-limit window of a key or of a client IP, projection read, other). The key
// lookup, the counter and the status read all go through `pool.query`; nothing on these paths
// checks out a client for a transaction. The parent asks for the tally over IPC ('counts').
// Env: DATABASE_URL, BENCH_VALID_LOOKUP (the valid key's lookup characters); prints `{"ready":true,"port":…}` on stdout once listening.
import { Client, Connection } from '@temporalio/client';
import { startApi } from '../../api/server.js';
import { createPool } from '../../db/pool.js';
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';

export interface QueryCounts {
  /** Lookups of the valid key (its first request, then one per API_KEY_CACHE_TTL_MS while in use). */
  validKeyLookups: number;
  /** Lookups of any other key: the forged ones. */
  keyLookups: number;
  ipWindowStatements: number;
  keyWindowStatements: number;
  projectionReads: number;
  other: Record<string, number>;
  total: number;
}

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const logger = createLogger({ name: 'api', level: 'silent' });
const pool = createPool(config.DATABASE_URL!, { applicationName: 'bench-auth-flood-api' });
const validLookup = process.env.BENCH_VALID_LOOKUP;
const counts: QueryCounts = {
  validKeyLookups: 0,
  keyLookups: 0,
  ipWindowStatements: 0,
  keyWindowStatements: 0,
  projectionReads: 0,
  other: {},
  total: 0,
};

const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
pool.query = ((...args: unknown[]) => {
  const [statement, maybeValues] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
  const text = typeof statement === 'string' ? statement : statement.text;
  const values = (typeof statement === 'string' ? maybeValues : (statement.values ?? maybeValues)) ?? [];
  counts.total++;
  if (/FROM api_keys/.test(text) && /WHERE lookup/.test(text)) {
    if (values[0] === validLookup) counts.validKeyLookups++;
    else counts.keyLookups++;
  } else if (/rate_limit_windows/.test(text) && String(values[0]).startsWith('ip:')) counts.ipWindowStatements++;
  else if (/rate_limit_windows/.test(text) && String(values[0]).startsWith('key:')) counts.keyWindowStatements++;
  else if (/\bdispatches\b/.test(text)) counts.projectionReads++;
  else counts.other[text.slice(0, 50)] = (counts.other[text.slice(0, 50)] ?? 0) + 1;
  return query(...args);
}) as typeof pool.query;

// GET /v1/status never calls Temporal: a lazy connection is created but never opened.
const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
const api = await startApi({ config, pool, temporal, logger, port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ ready: true, port: Number(new URL(api.url).port) })}\n`);

process.on('message', (message) => {
  if (message === 'counts') process.send!(counts);
});
process.once('SIGTERM', () => {
  void (async () => {
    api.server.closeAllConnections();
    await api.close();
    await pool.end();
    process.exit(0);
  })();
});
