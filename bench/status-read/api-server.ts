// The real API for the status-read benchmark, run in its own process: `startApi` with the whole
// middleware chain (request id, request log, errors, auth with the key cache, rate-limit counting,
// routing, access check), configured like production except RATE_LIMIT_PER_MINUTE, which the
// parent raises so that nothing is refused while every request is still counted in Postgres.
// Logging is on at `info`, one JSON line per request, into BENCH_LOG_FILE (a real file, so the
// cost of writing it is measured).
// Env: DATABASE_URL, RATE_LIMIT_PER_MINUTE, BENCH_LOG_FILE, PORT (0 = any: the benchmark's own
// rule, read here and not given to loadConfig, which refuses 0); prints `{"ready":true,"port":…}` on
// stdout once listening.
import { openSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { startApi } from '../../api/server.js';
import { createPool } from '../../db/pool.js';
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';

const { PORT: port = '0', ...env } = process.env;
const config = loadConfig({ ...env, LOG_LEVEL: 'info' });
const logger = createLogger({ name: 'api', level: config.LOG_LEVEL, destination: openSync(process.env.BENCH_LOG_FILE!, 'a') });
const pool = createPool(config.DATABASE_URL!, { applicationName: 'bench-api' });
pool.on('error', (error) => logger.error({ err: error }, 'idle Postgres client failed'));
// GET /v1/status never calls Temporal: a lazy connection is created but never opened.
const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });

const api = await startApi({ config, pool, temporal, logger, port: Number(port), host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ ready: true, port: Number(new URL(api.url).port) })}\n`);

process.once('SIGTERM', () => {
  void (async () => {
    api.server.closeAllConnections();
    await api.close();
    await pool.end();
    logger.flush();
    // A normal exit, so that `--cpu-prof` (BENCH_CPU_PROF=1) writes its profile.
    process.exit(0);
  })();
});
