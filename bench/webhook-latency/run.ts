// `npm run bench:webhook-latency`: how fast a carrier event becomes a signed webhook at a real
// receiver, and how many webhooks per second the whole service sustains beside a minimal Temporal
// workflow (signal → one POST activity) on the same dev server in the same run. Real components
// only, each in its own process: embedded Postgres, a Temporal dev server, the API (startApi), the
// product's worker (createWorker), the minimal workflow's worker and a node:http receiver, all on
// 127.0.0.1. Results go to results/<date>.md and .json (README.md explains every figure).
// Options (env): see README.md.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import { migrate } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { freePort, startPostgres } from '../../devtools/postgres.js';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { startTemporalCluster, TEMPORAL_SERVER_VERSION } from '../../devtools/temporal-server.js';
import { startDevServer } from '../../devtools/temporal-dev-server.js';
import {
  firstJsonLine,
  IMAGE_ENV,
  postgresCpuSeconds,
  processCpuSeconds,
  REPO_ROOT,
  startScript,
  stopChild,
} from '../status-read/processes.js';
import { median } from '../status-read/report.js';
import { databasePoints, historyEventsBeforeFirstSignal, historyEventsPerSignal, historyPoints, summariseBreakdown } from './breakdown.js';
import { ArrivalStream, inParallel, type CpuCounter } from './load.js';
import { latencyPhase, throughputRounds, THROUGHPUT_STATUSES, type Target } from './phases.js';
import { toMarkdown, type Result, type WorkerMemoryReport } from './report.js';
import { freeResultsName } from '../results-name.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  rate: env('BENCH_RATE', 50),
  latencySeconds: env('BENCH_LATENCY_S', 34),
  latencyWarmupSeconds: env('BENCH_LATENCY_WARMUP_S', 2),
  lightRate: env('BENCH_LIGHT_RATE', 10),
  lightSeconds: env('BENCH_LIGHT_S', 10),
  throughputRounds: env('BENCH_THROUGHPUT_ROUNDS', 2),
  throughputSeconds: env('BENCH_THROUGHPUT_S', 15),
  throughputWarmupSeconds: env('BENCH_THROUGHPUT_WARMUP_S', 3),
  inflight: env('BENCH_INFLIGHT', 64),
  variants: env('BENCH_VARIANTS', 1),
  throughputDispatches: env('BENCH_THROUGHPUT_DISPATCHES', 800),
  historySample: env('BENCH_HISTORY_SAMPLE', 100),
  coldEvents: env('BENCH_COLD_EVENTS', 100),
  coldRate: env('BENCH_COLD_RATE', 50),
  coldSeconds: env('BENCH_COLD_S', 20),
  coldWarmupSeconds: env('BENCH_COLD_WARMUP_S', 0),
  coldSteps: (process.env.BENCH_COLD_STEPS ?? '25,50,75,100').split(',').filter(Boolean).map(Number).join(','),
  coldStepSeconds: env('BENCH_COLD_STEP_S', 10),
  /** The product worker's cache as this benchmark runs it (WORKER_MAX_CACHED_WORKFLOWS, 2000 unless set). */
  workerCache: Number(process.env.WORKER_MAX_CACHED_WORKFLOWS ?? 2000),
  minimalBodyBytes: env('BENCH_MINIMAL_BODY_BYTES', 700),
  temporalDb: process.env.BENCH_TEMPORAL_DB === 'memory' ? ('memory' as const) : ('sqlite-file' as const),
  noVmTimeout: process.env.BENCH_NO_VM_TIMEOUT === '1' ? 1 : 0,
  // BENCH_EAGER_ACTIVITIES=0: the servers without eager activity dispatch (devtools/temporal-server-settings.ts), to measure it.
  eagerActivities: process.env.BENCH_EAGER_ACTIVITIES === '0' ? 0 : 1,
  temporal: process.env.BENCH_TEMPORAL === 'production' ? ('production' as const) : ('dev server' as const),
};
const GOALS = { p50Ms: 200, p99Ms: 1000, ratio: 0.8 };
const TASK_QUEUE = 'bench-card-delivery';
const MINIMAL_TASK_QUEUE = 'bench-minimal';
/** BENCH_PROFILE_DIR=dir: the two workers write V8 CPU profiles there (open in Chrome DevTools). */
function profileFlags(name: string): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  return [
    ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, name)}`] : []),
    // BENCH_NO_VM_TIMEOUT=1: an experiment (see no-vm-timeout.ts), both workers alike.
    ...(process.env.BENCH_NO_VM_TIMEOUT === '1' ? ['--import', path.join(REPO_ROOT, 'bench/webhook-latency/no-vm-timeout.ts')] : []),
  ];
}
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? path.join(REPO_ROOT, 'bench/webhook-latency/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const started = Date.now();
const loadAtStart = os.loadavg()[0].toFixed(2);
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-webhook-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
const [pg, cliPath] = await Promise.all([startPostgres({ dataDir: path.join(work, 'pg'), persistent: false }), resolveTemporalCli()]);
// BENCH_TEMPORAL=production: the production server (devtools/temporal-server.ts), two members on the
// benchmark's Postgres, instead of the CLI's dev server.
const eagerOverride = settings.eagerActivities ? {} : { 'system.enableActivityEagerExecution': false };
const temporalServer = await (async () => {
  if (settings.temporal === 'production') {
    const url = new URL(pg.url);
    const postgres = { host: url.hostname, port: Number(url.port), user: url.username, password: decodeURIComponent(url.password) };
    const cluster = await startTemporalCluster({
      postgres,
      members: 2,
      dataDir: path.join(work, 'temporal'),
      dynamicConfig: eagerOverride,
    });
    return {
      address: cluster.address,
      pids: () => cluster.members.map((m) => m.pid),
      stop: () => cluster.stop(),
      describe: `Temporal server ${TEMPORAL_SERVER_VERSION} (devtools/temporal-server.ts), 2 members on the same embedded Postgres`,
    };
  }
  const devServer = await startDevServer({
    cliPath,
    port: await freePort(),
    dbFilename: settings.temporalDb === 'sqlite-file' ? path.join(work, 'temporal.sqlite') : undefined,
    dynamicConfig: eagerOverride,
  });
  return {
    address: devServer.address,
    pids: () => [devServer.child.pid!],
    stop: () => devServer.stop(),
    describe: `${execFileSync(cliPath, ['--version'], { encoding: 'utf8' }).trim()}, dev server, ${settings.temporalDb === 'memory' ? 'in-memory' : 'SQLite file (WAL, synchronous=off)'}`,
  };
})();
const devServer = temporalServer;
const pool = createPool(pg.url, { max: 4, applicationName: 'bench-driver' });
let stopping = false;
pool.on('error', (error) => stopping || log(`idle Postgres client failed: ${error.message}`));
const connection = await Connection.connect({ address: devServer.address });
const temporal = new Client({ connection });
const children: Array<ReturnType<typeof startScript>> = [];
const secretFile = path.join(work, 'endpoint-secret');
const logFile = (name: string) => path.join(work, `${name}.log`);
try {
  await migrate(pg.url);
  const issuerId = (await createIssuer(pool, 'Bench Issuer')).id;
  const key = (await createApiKey(pool, { issuerId, scopes: ['status:read', 'dispatches:write', 'events:write'], mode: 'live' }))!.key;

  const receiver = startScript('../webhook-latency/receiver-process.ts', { BENCH_SECRET_FILE: secretFile });
  children.push(receiver);
  const arrivals = new ArrivalStream(receiver);
  const { url: receiverUrl } = await arrivals.ready;
  const endpoint = await createWebhookEndpoint(pool, { issuerId, url: receiverUrl, events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(`could not add the webhook endpoint: ${endpoint.reason}`);
  writeFileSync(secretFile, endpoint.secret);

  const startWorker = (generation: number) =>
    startScript(
      '../webhook-latency/worker-process.ts',
      {
        DATABASE_URL: pg.url,
        TEMPORAL_ADDRESS: devServer.address,
        TEMPORAL_TASK_QUEUE: TASK_QUEUE,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        BENCH_LOG_FILE: logFile('worker'),
        ...IMAGE_ENV,
        // The warm case needs every one of its ~1,900 dispatches cached (the product's default is 1000).
        WORKER_MAX_CACHED_WORKFLOWS: String(settings.workerCache),
      },
      profileFlags(generation ? `worker-${generation}` : 'worker'),
    );
  let worker = startWorker(0);
  const minimal = startScript(
    '../webhook-latency/minimal-worker.ts',
    {
      TEMPORAL_ADDRESS: devServer.address,
      BENCH_TASK_QUEUE: MINIMAL_TASK_QUEUE,
      BENCH_RECEIVER_URL: receiverUrl,
      BENCH_BODY_BYTES: String(settings.minimalBodyBytes),
      BENCH_LOG_FILE: logFile('minimal-worker'),
    },
    profileFlags('minimal-worker'),
  );
  // The status-read benchmark's API process: startApi, logging at info to a file; its lazy
  // Temporal connection opens at the first signal here.
  const api = startScript('../status-read/api-server.ts', {
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: devServer.address,
    TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    BENCH_LOG_FILE: logFile('api'),
    PORT: '0',
  });
  children.push(worker, minimal, api);
  const [{ port }] = await Promise.all([
    firstJsonLine<{ port: number }>(api, 'API'),
    firstJsonLine(worker, 'worker'),
    firstJsonLine(minimal, 'minimal worker'),
  ]);
  const apiUrl = `http://127.0.0.1:${port}`;
  log(
    `ready after ${elapsed()}: API ${apiUrl}, receiver ${receiverUrl}, Temporal ${devServer.address} (${settings.temporal === 'production' ? 'production, 2 members' : settings.temporalDb})`,
  );

  const postmasterPid = pg.source === 'embedded' ? Number(readFileSync(path.join(work, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]) : 0;
  const counters: Record<string, CpuCounter> = {
    worker: () => processCpuSeconds(worker.pid!),
    api: () => processCpuSeconds(api.pid!),
    temporal: () => temporalServer.pids().reduce((sum, pid) => sum + processCpuSeconds(pid), 0),
    postgres: () => (postmasterPid ? postgresCpuSeconds(postmasterPid) : 0),
    receiver: () => processCpuSeconds(receiver.pid!),
    'minimal worker': () => processCpuSeconds(minimal.pid!),
    driver: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    },
  };
  const target: Target = { apiUrl, key, arrivals, counters };
  const register = async (id: string) => {
    const response = await fetch(`${apiUrl}/v1/dispatches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, destination: { postal_code: '75011', country_code: 'FR' } }),
    });
    if (response.status !== 201) throw new Error(`registration answered ${response.status}: ${await response.text()}`);
  };

  // 1. Latency, first at a light rate (what one event costs), then at the steady rate of the goal.
  //    Fewer dispatches than the worker caches (2000): every signal finds its workflow cached.
  const lightIds = Array.from({ length: settings.lightRate * settings.lightSeconds }, () => randomUUID());
  const latencyIds = Array.from({ length: settings.rate * (settings.latencyWarmupSeconds + settings.latencySeconds) }, () => randomUUID());
  const registrationsPerSecond = await inParallel([...lightIds, ...latencyIds], 16, register);
  log(`registered ${lightIds.length + latencyIds.length} dispatches (${registrationsPerSecond}/s) after ${elapsed()}`);
  const light = await latencyPhase(target, lightIds, { rate: settings.lightRate, warmup: 0, status: 'in_transit' });
  log(`light load: p50 ${light.summary.p50Ms} ms, p99 ${light.summary.p99Ms} ms after ${elapsed()}`);
  const latency = await latencyPhase(target, latencyIds, {
    rate: settings.rate,
    warmup: settings.rate * settings.latencyWarmupSeconds,
    status: 'in_transit',
  });
  log(
    `latency: p50 ${latency.summary.p50Ms} ms, p99 ${latency.summary.p99Ms} ms (${latency.summary.arrived}/${latency.summary.events}) after ${elapsed()}`,
  );

  // 2. Where the time goes: the database's points for every event, the history's for a sample.
  const explain = async (phase: typeof latency) => {
    const dbPoints = await databasePoints(pool, phase.measured, 'in_transit');
    const step = Math.max(1, Math.floor(phase.measured.length / settings.historySample));
    const sample = phase.measured.filter((_, i) => i % step === 0).slice(0, settings.historySample);
    const timelines = sample.map((e) => ({ ...dbPoints.get(e.dispatchId) }));
    await inParallel(
      sample.map((e, i) => ({ e, i })),
      8,
      async ({ e, i }) => void Object.assign(timelines[i], await historyPoints(temporal, e.dispatchId, e.sentAt)),
    );
    return { rows: summariseBreakdown(timelines), historySample: timelines.length, databaseOnly: dbPoints.size };
  };
  const breakdown: Result['breakdown'] = { light: await explain(light), steady: await explain(latency) };

  // 3. Cold: dispatches registered while one worker ran, then that worker stopped (SIGTERM, graceful)
  //    and a new one started: none of them is in the new worker's cache, each signal replays its
  //    history first. One phase at the goal's rate right after the restart, then steps of rate, each
  //    on dispatches of its own, to find the rate the cold case sustains.
  let coldSteady: Result['coldSteady'];
  if (settings.coldRate > 0) {
    const coldIds = Array.from({ length: settings.coldRate * (settings.coldWarmupSeconds + settings.coldSeconds) }, () => randomUUID());
    const stepRates = settings.coldSteps ? settings.coldSteps.split(',').map(Number) : [];
    const stepIds = stepRates.map((rate) => Array.from({ length: rate * settings.coldStepSeconds }, () => randomUUID()));
    const coldRegistrations = await inParallel([...coldIds, ...stepIds.flat()], 16, register);
    log(`registered ${coldIds.length + stepIds.flat().length} dispatches for the cold phases (${coldRegistrations}/s) after ${elapsed()}`);
    const stopStarted = performance.now();
    await stopChild(worker);
    const stopMs = Math.round(performance.now() - stopStarted);
    worker = startWorker(1);
    children.push(worker);
    await firstJsonLine(worker, 'restarted worker');
    const readyMs = Math.round(performance.now() - stopStarted - stopMs);
    log(`worker restarted (stop ${stopMs} ms, new worker polling after ${readyMs} ms) after ${elapsed()}`);
    const phase = await latencyPhase(target, coldIds, {
      rate: settings.coldRate,
      warmup: settings.coldRate * settings.coldWarmupSeconds,
      status: 'in_transit',
    });
    log(`cold at ${settings.coldRate}/s: p50 ${phase.summary.p50Ms} ms, p99 ${phase.summary.p99Ms} ms after ${elapsed()}`);
    const steps: NonNullable<Result['coldSteady']>['steps'] = [];
    for (const [i, rate] of stepRates.entries()) {
      const step = await latencyPhase(target, stepIds[i], { rate, warmup: 0, status: 'in_transit' });
      steps.push({ rate, summary: step.summary, cpu: step.cpu });
      log(`cold step ${rate}/s: p50 ${step.summary.p50Ms} ms, p99 ${step.summary.p99Ms} ms after ${elapsed()}`);
    }
    const workerMemory = { rssMiB: statusMiB(worker.pid!, 'VmRSS'), peakMiB: statusMiB(worker.pid!, 'VmHWM') };
    // Where that memory is: the worker's own report (worker-process.ts, SIGWINCH).
    const reported = firstJsonLine<{ memory: WorkerMemoryReport }>(worker, 'worker memory report');
    worker.kill('SIGWINCH');
    const memoryReport = (await reported).memory;
    log(`worker memory: ${JSON.stringify(memoryReport)}`);
    breakdown.cold = await explain(phase);
    coldSteady = {
      summary: phase.summary,
      cpu: phase.cpu,
      steps,
      restart: { stopMs, readyMs },
      replayedEvents: await historyEventsBeforeFirstSignal(temporal, coldIds[0]),
      workerMemory: { ...workerMemory, workflowsLoaded: coldIds.length + stepIds.flat().length, report: memoryReport },
    };
  }
  const bodyBytes = median([...arrivals.first.values()].map((a) => a.bytes));

  // 3. Throughput, ours beside the minimal workflow, on fresh dispatches (again fewer than the cache).
  const throughputWanted = settings.throughputRounds > 0 || settings.variants > 0;
  const throughputIds = Array.from({ length: throughputWanted ? settings.throughputDispatches : 0 }, () => randomUUID());
  await inParallel(throughputIds, 16, register);
  const minimalIds = throughputIds.map((_, i) => `bench-minimal-${i}`);
  await inParallel(minimalIds, 16, async (workflowId) => {
    await temporal.workflow.start('minimalWorkflow', { workflowId, taskQueue: MINIMAL_TASK_QUEUE });
  });
  log(`registered ${throughputIds.length} dispatches and started ${minimalIds.length} minimal workflows after ${elapsed()}`);
  const throughput = await throughputRounds(target, temporal, throughputIds, minimalIds, {
    rounds: settings.throughputRounds,
    inflight: settings.inflight,
    warmupS: settings.throughputWarmupSeconds,
    seconds: settings.throughputSeconds,
    variants: settings.variants > 0,
  });

  // 4. Cold: events to the light-load dispatches, evicted from the worker's cache since.
  const coldIds = lightIds.slice(0, settings.coldEvents);
  const cold = coldIds.length ? await latencyPhase(target, coldIds, { rate: 10, warmup: 0, status: 'out_for_delivery' }) : undefined;
  const historyEvents = {
    'ours (first carrier event of a latency dispatch)': await historyEventsPerSignal(temporal, latencyIds.at(-1)!),
    ...(throughputWanted
      ? {
          'ours (a throughput dispatch, per carrier event)': await historyEventsPerSignal(temporal, throughputIds[0]),
          "minimal (per signal, the variants' signals included)": await historyEventsPerSignal(temporal, minimalIds[0]),
        }
      : {}),
  };
  log(`cold: p50 ${cold?.summary.p50Ms} ms, p99 ${cold?.summary.p99Ms} ms after ${elapsed()}`);

  const {
    rows: [attempts],
  } = await pool.query<{ total: number; failed: number }>(
    'SELECT count(*)::int AS total, (count(*) FILTER (WHERE error IS NOT NULL))::int AS failed FROM delivery_attempts',
  );
  const {
    rows: [pgVersion],
  } = await pool.query<{ server_version: string }>('SHOW server_version');
  const result: Result = {
    date: new Date().toISOString().slice(0, 10),
    settings: { ...settings, throughputStatuses: THROUGHPUT_STATUSES.join(' → ') },
    goals: GOALS,
    latency: latency.summary,
    latencyCpu: latency.cpu,
    light: { summary: light.summary, cpu: light.cpu },
    breakdown,
    throughput,
    cold: cold && { summary: cold.summary, cpu: cold.cpu },
    coldSteady,
    historyEvents,
    checks: {
      'delivery attempts recorded': attempts.total,
      'failed delivery attempts (non-2xx, timeout, refused)': attempts.failed,
      'retried attempts that reached the receiver': arrivals.retries,
      'requests whose X-Service-Signature did not verify': arrivals.unverified,
      'registrations per second through the API (update-with-start, 16 at once)': registrationsPerSecond,
      'webhook body bytes (median, ours)': bodyBytes,
      'minimal workflow body bytes': settings.minimalBodyBytes,
      'log lines written (worker / API / minimal worker)': ['worker', 'api', 'minimal-worker']
        .map((name) => lineCount(logFile(name)))
        .join(' / '),
    },
    environment: {
      node: process.version,
      cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
      'load average (1 min) at start / end': `${loadAtStart} / ${os.loadavg()[0].toFixed(2)}`,
      postgres: `${pgVersion.server_version} (${pg.source === 'embedded' ? 'embedded, fsync off' : 'DATABASE_URL'})`,
      temporal: temporalServer.describe,
      'API and worker logging': 'pino at info to files in os.tmpdir() (the worker also logs the SDK and workflow lines at INFO)',
      'run wall time': elapsed(),
    },
  };
  // A run on the in-memory dev server or the production server is a different set-up: its own files beside the default's.
  const setUp = settings.noVmTimeout ? '-no-vm-timeout' : settings.temporal === 'production' ? '-production' : settings.temporalDb === 'memory' ? '-memory' : ''; // prettier-ignore
  const name = freeResultsName(RESULTS_DIR, `${result.date}${setUp}`);
  // The JSON first: a report that fails to render loses no figure.
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  const markdown = toMarkdown(result);
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  process.stdout.write(`${markdown}\n`);
  log(`written ${path.relative(REPO_ROOT, RESULTS_DIR)}/${name}.md and .json after ${elapsed()}`);
  if (attempts.failed > 0 || arrivals.unverified > 0 || latency.summary.arrived < latency.summary.events) process.exitCode = 1;
} finally {
  for (const child of children.reverse()) await stopChild(child);
  stopping = true;
  await connection.close();
  await pool.end();
  await devServer.stop();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}

function lineCount(file: string): number {
  try {
    return readFileSync(file, 'utf8').split('\n').length - 1;
  } catch {
    return 0;
  }
}

/** A /proc/<pid>/status memory field in MiB (0 when the process is gone). */
function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const kib = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return Math.round(kib / 1024);
  } catch {
    return 0;
  }
}
