// Tables: none (the connection pool every db/ module takes).
// Creates the pg connection pool every process uses. One place that knows how we talk to Postgres.
// Statements on a hot path (the API's reads, the projection write, webhook events and attempts) are
// named, so each connection parses them once: bench/webhook-latency measured Postgres at 3.3–3.5 ms
// of CPU per delivered webhook with unnamed statements, 2.3 ms with named ones.
import pg from 'pg';
import { isDatabaseUnavailable } from '../platform/database-unavailable.js';

export { isDatabaseUnavailable };

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
type ConnectCallback = (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

// `date` columns come back as the ISO string Postgres prints (YYYY-MM-DD), never as a JS Date
// shifted into the process's time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (text) => text);
// `bigint` counters (versions) fit in a JS number for any realistic dispatch.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number(text));

const CONNECT_TIMEOUT_MS = 10_000;

/** The lines a process logs about its database (a pino logger, or anything with the same two methods). */
export interface ReachabilityLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * Says once that this process cannot reach the database, and once that it can again (docs/runbook.md
 * "Postgres unreachable"): one line for an outage, not a stack per request, attempt or reconnect.
 * `consequence` ends the first line: what the process does meanwhile.
 */
export class DatabaseReachability {
  private since: number | undefined;

  constructor(
    private readonly log: ReachabilityLog,
    private readonly consequence: string,
  ) {}

  /** Notes a failure: true when it means the database is unreachable (said once an outage), false for any other error. */
  failed(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    if (this.since === undefined) {
      this.since = Date.now();
      const { code, message } = error as { code?: unknown; message?: unknown };
      this.log.warn({ reason: String(message), ...(typeof code === 'string' && { code }) }, `database unreachable: ${this.consequence}`);
    }
    return true;
  }

  /** Notes a connection made: the line that the outage is over, if there was one. */
  reached(): void {
    if (this.since === undefined) return;
    const unreachableMs = Date.now() - this.since;
    this.since = undefined;
    this.log.info({ unreachable_ms: unreachableMs }, 'database reachable again');
  }
}

export function createPool(
  databaseUrl: string,
  options: {
    max?: number;
    applicationName?: string;
    /** An idle connection's error that does not just say the database is unreachable (that goes to `reachability`). */
    onIdleError?: (error: Error) => void;
    reachability?: DatabaseReachability;
  } = {},
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
  const { reachability } = options;
  pool.on('error', (error) => {
    if (!reachability?.failed(error)) options.onIdleError?.(error);
  });
  if (reachability) {
    // Every query takes a connection first (pool.query calls connect with a callback): a new one
    // that opens ends an outage, one that cannot open starts or continues it.
    pool.on('connect', () => reachability.reached());
    const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => Promise<pg.PoolClient> | undefined;
    pool.connect = ((callback?: ConnectCallback) => {
      if (callback) {
        return connect((error, client, done) => {
          if (error) reachability.failed(error);
          callback(error, client, done);
        });
      }
      return connect()!.catch((error: unknown) => {
        reachability.failed(error);
        throw error;
      });
    }) as typeof pool.connect;
  }
  return pool;
}
