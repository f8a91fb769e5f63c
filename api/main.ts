// Production entry point of an API process: config, Postgres pool, Temporal client, HTTP server,
// and a graceful shutdown on SIGINT/SIGTERM: /readyz answers 503 at once, then (after
// API_DRAIN_DELAY, 0 by default) the listener closes, in-flight requests finish, and the process
// exits 0 (docs/operations.md "Draining"). A bad variable or a port in use stops start-up with one
// line on stderr naming the variable, and exit code 1 (docs/configuration.md "When a process does not start").
import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { createPool, DatabaseReachability } from '../db/pool.js';
import { ConfigError, exitOnStartupError, loadConfig, type ConfigProblem } from '../platform/config.js';
import { namespaceMissing } from '../platform/dependency-errors.js';
import { createLogger, type Logger } from '../platform/logger.js';
import { startTracing, stopTracing } from '../platform/tracing.js';
import { checkTemporal, createTemporalClient } from '../temporal/client.js';
import { temporalConnectionOptions } from '../temporal/connection-options.js';
import type { Readiness } from './routes/health.js';
import { startApi } from './server.js';

// Made once LOG_LEVEL is known to be a level.
let apiLogger: Logger | undefined;

/** How long the start-up look at Temporal waits before saying it is unreachable. */
const TEMPORAL_CHECK_MS = 5_000;

async function main(): Promise<void> {
  // First: the Temporal client and the HTTP server take their tracing hooks when they are made.
  await startTracing('card-delivery-api');
  const config = loadConfig();
  const missing: ConfigProblem[] = (['DATABASE_URL', 'TEMPORAL_ADDRESS'] as const)
    .filter((variable) => !config[variable])
    .map((variable) => ({ variable, problem: 'is required for a standalone API process (npm start sets it up)' }));
  if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) throw new ConfigError(missing);
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'api' });
  apiLogger = logger;

  const pool = createPool(config.DATABASE_URL, {
    applicationName: 'card-delivery-api',
    max: config.DATABASE_POOL_MAX,
    reachability: new DatabaseReachability(logger, 'requests that need it answer 503 until it is back'),
    onIdleError: (error) => logger.error({ err: error }, 'idle Postgres client failed'),
  });
  // Lazy: a process started while Temporal is down (a pod rescheduled in an outage) still serves the
  // reads, which need only Postgres; what needs Temporal answers 503 until it answers, and /readyz
  // says `degraded` meanwhile (docs/runbook.md "Temporal unreachable").
  const connection = Connection.lazy(temporalConnectionOptions(config.TEMPORAL_ADDRESS, config));
  const temporal = createTemporalClient({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const readiness: Readiness = { draining: false };
  const api = await startApi({ config, pool, temporal, logger, readiness });
  logger.info({ url: api.url }, 'API listening');
  // Is Temporal there? Asked now, answered below. The signals are ours from the moment the server
  // listens: a SIGTERM during the check (a pod stopped just after it became ready) drains like any
  // other instead of killing the process, and ends the check before the connection closes under it.
  const checkAborted = new AbortController();
  const checked = temporal.withAbortSignal(checkAborted.signal, () => checkTemporal(temporal, TEMPORAL_CHECK_MS));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    readiness.draining = true;
    // From now on no connection is kept alive for another request: new answers say `Connection: close`.
    api.server.on('request', (_req, res: http.ServerResponse) => res.setHeader('Connection', 'close'));
    logger.info({ signal, drain_delay_ms: config.API_DRAIN_DELAY }, 'shutting down: /readyz answers 503');
    if (config.API_DRAIN_DELAY > 0) await sleep(config.API_DRAIN_DELAY);
    logger.info('closing the listener; finishing in-flight requests');
    // server.close() closes only the connections idle when it is called: a kept-alive connection
    // whose request was in flight is closed as soon as it is answered.
    const sweep = setInterval(() => api.server.closeIdleConnections(), 100);
    const force = setTimeout(() => {
      logger.error('graceful shutdown timed out');
      process.exit(1);
    }, 15_000).unref();
    let code = 0;
    try {
      await api.close();
      checkAborted.abort();
      await checked;
      await connection.close();
      await pool.end();
      await stopTracing();
    } catch (error) {
      logger.error({ err: error }, 'error while stopping');
      code = 1;
    } finally {
      clearTimeout(force);
      clearInterval(sweep);
      // Exits once the logs are out rather than when nothing is left to wait on: a connection to a
      // Temporal that never answered keeps a retry timer of the gRPC channel alive.
      logger.flush(() => process.exit(code));
    }
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  const check = await checked;
  if (!check.ok && !stopping) {
    const where = { temporal_address: config.TEMPORAL_ADDRESS, temporal_namespace: config.TEMPORAL_NAMESPACE };
    if (check.namespaceMissing) {
      logger.warn(
        where,
        `${namespaceMissing(config.TEMPORAL_NAMESPACE, config.TEMPORAL_ADDRESS)}: serving reads; registrations and carrier events answer 503 until it does`,
      );
    } else {
      // e.g. "16 UNAUTHENTICATED: …" for refused credentials
      logger.warn(
        { ...where, reason: check.reason },
        'Temporal is unreachable: serving reads; registrations and carrier events answer 503 until it answers',
      );
    }
  }
}

main().catch((error) => {
  apiLogger?.flush();
  exitOnStartupError(error);
  const logger = apiLogger ?? createLogger({ name: 'api', level: 'info' });
  logger.fatal({ err: error }, 'API failed to start');
  logger.flush();
  process.exitCode = 1;
});
