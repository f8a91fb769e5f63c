// Tables: none (the connection pool every db/ module takes).
// Creates the pg connection pool every process uses. One place that knows how we talk to Postgres.
// Statements on a hot path (the API's reads, the projection write, webhook events and attempts) are
// named, so each connection parses them once: bench/webhook-latency measured Postgres at 3.3–3.5 ms
// of CPU per delivered webhook with unnamed statements, 2.3 ms with named ones.
import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// `date` columns come back as the ISO string Postgres prints (YYYY-MM-DD), never as a JS Date
// shifted into the process's time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (text) => text);
// `bigint` counters (versions) fit in a JS number for any realistic dispatch.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number(text));

export function createPool(
  databaseUrl: string,
  options: { max?: number; applicationName?: string; onIdleError?: (error: Error) => void } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'card-delivery',
    idleTimeoutMillis: 30_000,
  });
  // An idle connection dropped by the server (restart, failover) must not crash the process: the
  // pool discards it and the next query opens a new one.
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}
