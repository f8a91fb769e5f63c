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

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Postgres SQLSTATE classes and codes that say "the database cannot serve now" rather than "this
 * statement is wrong": connection exceptions (08), the server shutting down or starting (57P01–57P03),
 * too many connections (53300).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']); // prettier-ignore

/** True when `error` means Postgres is unreachable, shutting down or too slow to connect to. */
export function isDatabaseUnavailable(error: unknown): boolean {
  // Duck-typed: a socket error comes from Node's own realm, where `instanceof Error` of another
  // realm (a test runner's VM context) is false.
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_NETWORK_CODES.has(code)))
    return true;
  // pg-pool's connect timeout and a connection lost mid-query carry no code.
  return typeof message === 'string' && /timeout exceeded when trying to connect|Connection terminated/.test(message);
}

export function createPool(
  databaseUrl: string,
  options: { max?: number; applicationName?: string; onIdleError?: (error: Error) => void } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'card-delivery',
    // Dates and days in UTC whatever the server's default (a managed Postgres may run in local
    // time): the domain's dates are UTC dates, and SQL's `::date`, `current_date` and
    // `interval '1 day'` follow the session's zone. A startup parameter: no statement per connection, and
    // PgBouncer (1.20+) tracks it per client.
    options: '-c timezone=UTC',
    idleTimeoutMillis: 30_000,
    // An unreachable server fails a query in seconds (the API answers 503), instead of holding the
    // request until the client gives up.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // An idle connection dropped by the server (restart, failover) must not crash the process: the
  // pool discards it and the next query opens a new one.
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}
