// One side of the capacity benchmark (README.md): a version of the service on fresh infrastructure
// of its own (bench/event-cost/infrastructure.ts), driven only from outside (HTTP, its admin CLI,
// the Temporal client), with cards spread over many postal codes. Measures, in this order: every
// registration's register → queryable time; the CPU each process spends per `in_transit` carrier
// event at a steady rate; the history events and bytes of whole lives; then capacity, as rising
// open-loop steps of `in_transit` events until p99 event → webhook exceeds the limit. Stops
// everything it started, whatever happened.
import { randomUUID } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import { freePort } from '../../devtools/postgres.js';
import { machineCpuSeconds, startScript, stopChild } from '../status-read/processes.js';
import { median } from '../status-read/report.js';
import { inParallel, postCarrierEvent, sleep, steadyRate } from '../webhook-latency/load.js';
import {
  admin,
  migrateVersion,
  startEntryPoint,
  startStatsPostgres,
  startVersionDevServer,
  stopProcess,
  track,
  waitReady,
  webhookEventTypes,
} from '../event-cost/infrastructure.js';
import { threadCpuSeconds, treeCpuSeconds } from '../event-cost/meters.js';
import type { VersionTree } from '../event-cost/versions.js';
import { selfSignedCertificate } from '../../test/support/certificate.js';
import { Webhooks } from './webhooks.js';

export interface Settings {
  /** Events in the CPU window (N), at `rate` per second. */
  dispatches: number;
  rate: number;
  /** Whole lives for the history figures (K). */
  lives: number;
  /** Open-loop rates (events/s) of the capacity steps, in order; empty: no capacity steps. */
  steps: number[];
  stepSeconds: number;
  /** p99 event → webhook above which a step fails and the steps stop. */
  limitMs: number;
  registerConcurrency: number;
  /** Distinct postal codes the cards are spread over. */
  postalCodes: number;
  logLevel: string;
  /** The receiver serves HTTPS (a self-signed certificate the API and the worker trust), as production endpoints do. */
  webhookTls: boolean;
  /** A folder for the worker's V8 CPU profiles (`node --cpu-prof`), or undefined. */
  profileDir?: string;
}

/**
 * The settings from the environment (README.md's table), for run.ts and probe.ts alike; `defaults`
 * are where the two differ (a probe makes fewer lives and no capacity steps).
 */
export function settingsFromEnv(defaults: { lives: number; steps: string }, profileDir: string | undefined): Settings {
  const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  return {
    dispatches: env('BENCH_DISPATCHES', 200),
    rate: env('BENCH_RATE', 10),
    lives: env('BENCH_LIVES', defaults.lives),
    steps: (process.env.BENCH_STEPS ?? defaults.steps).split(',').filter(Boolean).map(Number),
    stepSeconds: env('BENCH_STEP_S', 8),
    limitMs: env('BENCH_LIMIT_MS', 1000),
    registerConcurrency: env('BENCH_REGISTER_CONCURRENCY', 16),
    postalCodes: env('BENCH_POSTAL_CODES', 1000),
    logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
    webhookTls: process.env.BENCH_WEBHOOK_TLS === '1',
    profileDir,
  };
}

export const PROCESSES = ['api', 'worker', 'temporal', 'postgres'] as const;
export type ProcessName = (typeof PROCESSES)[number];
type Cpu = Record<ProcessName, number>;

export interface Step {
  rate: number;
  sent: number;
  accepted: number;
  /** Webhooks that had not arrived 10 s after the step's last send (counted as over the limit). */
  missing: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** API + worker CPU ms per event during the step (drain included). */
  oursCpuMsPerEvent: number;
  machineBusyPercent: number;
}

export interface SideResult {
  label: string;
  commit: string;
  failures: string[];
  perEvent: { cpuMs: Record<ProcessName | 'ours' | 'total', number>; windowS: number; machineBusyPercent: number };
  /**
   * The worker process's CPU ms per event in the same window, by thread name (bench/event-cost
   * meters.ts threadCpuSeconds): where the worker's share goes, measured by the kernel rather than
   * sampled by a profiler.
   */
  workerThreadsCpuMs: Record<string, number>;
  /** The same events sent again, each a duplicate: CPU per event that changes nothing, the same way. */
  perRepeat: SideResult['perEvent'] & { workerThreadsCpuMs: Record<string, number> };
  /** CPU ms per second of each process with the stack up and no traffic (pollers, timers, metrics). */
  idleCpuMsPerS: Record<ProcessName, number>;
  life: { historyEvents: number; historyBytes: number; markers: number; workflowTasks: number; activities: number; runs: number };
  /** retried503: registrations answered 503 and retried (their time counts from the first attempt). */
  registration: { count: number; p50Ms: number; p99Ms: number; retried503: number };
  steps: Step[];
  /** The highest step rate whose p99 stayed within the limit (0: none did). */
  capacity: number;
  profiles: string[];
}

/** How long the idle CPU is measured, with the stack up and nothing sent. */
const IDLE_WINDOW_MS = Number(process.env.BENCH_IDLE_S ?? 10) * 1000;

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Each running side's temp folder, for run.ts to remove when a signal ends the run. */
export const workDirs = new Set<string>();

export async function measureSide(version: VersionTree, settings: Settings, cliPath: string, log: (message: string) => void) {
  const say = (message: string) => log(`${version.label}: ${message}`);
  const cleanups: Array<() => Promise<void> | void> = [];
  const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-capacity-'));
  chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
  workDirs.add(work);
  cleanups.push(() => {
    // BENCH_KEEP_LOGS=<folder>: the API's and worker's logs are copied there first.
    const keep = process.env.BENCH_KEEP_LOGS;
    if (keep) for (const file of ['api.log', 'worker.log']) cpSync(path.join(work, file), path.join(keep, `${version.label.replace(/\W+/g, '-')}-${file}`), { force: true }); // prettier-ignore
    rmSync(work, { recursive: true, force: true });
    workDirs.delete(work);
  });
  const result: Partial<SideResult> = { label: version.label, commit: version.commit, failures: [], steps: [], profiles: [] };
  try {
    await measure(version, settings, cliPath, say, work, cleanups, result);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        say(`clean-up step failed: ${(error as Error).message}`);
      }
    }
    say('stopped and cleaned up');
  }
  return result as SideResult;
}

/** A self-signed certificate for 127.0.0.1 (BENCH_WEBHOOK_TLS), written into the side's folder. */
async function receiverCertificate(work: string): Promise<{ keyFile: string; certFile: string }> {
  const pems = await selfSignedCertificate('127.0.0.1');
  const files = { keyFile: path.join(work, 'receiver-key.pem'), certFile: path.join(work, 'receiver-cert.pem') };
  writeFileSync(files.keyFile, pems.key);
  writeFileSync(files.certFile, pems.cert);
  return files;
}

async function measure(
  version: VersionTree,
  settings: Settings,
  cliPath: string,
  say: (message: string) => void,
  work: string,
  cleanups: Array<() => Promise<void> | void>,
  result: Partial<SideResult>,
): Promise<void> {
  const failures = result.failures!;
  const dir = version.dir;
  const postgres = await startStatsPostgres(path.join(work, 'pg'));
  cleanups.push(() => postgres.pg.stop());
  await migrateVersion(dir, postgres.url);
  const devServer = await startVersionDevServer(dir, cliPath, path.join(work, 'temporal.sqlite'));
  cleanups.push(() => devServer.stop());

  const secretFile = path.join(work, 'endpoint-secret');
  const tls = settings.webhookTls ? await receiverCertificate(work) : undefined;
  const receiver = track(
    startScript('../webhook-latency/receiver-process.ts', {
      BENCH_SECRET_FILE: secretFile,
      ...(tls && { BENCH_TLS_KEY_FILE: tls.keyFile, BENCH_TLS_CERT_FILE: tls.certFile }),
    }),
  );
  cleanups.push(() => stopChild(receiver));
  const webhooks = new Webhooks(receiver);
  const { url: receiverUrl } = await webhooks.ready;

  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: devServer.address,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_PER_MINUTE: '1000000000',
    PREDICTION_REFRESH_INTERVAL: '24h',
    LOG_LEVEL: settings.logLevel,
    HOST: '127.0.0.1',
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    // The receiver's certificate is trusted as a public CA's would be: verification stays on.
    ...(tls && { NODE_EXTRA_CA_CERTS: tls.certFile }),
  };
  const types = await webhookEventTypes(dir, env);
  const issuer = await admin<{ id: string }>(dir, env, 'issuer', 'create', '--name', 'Bench Capacity');
  const { key } = await admin<{ key: string }>(dir, env, 'key', 'create', '--issuer', issuer.id);
  const endpoint = await admin<{ secret: string }>(dir, env, 'webhook', 'add', '--issuer', issuer.id, '--url', receiverUrl, '--events', types.join(',')); // prettier-ignore
  writeFileSync(secretFile, endpoint.secret);

  const [apiPort, metricsPort] = [await freePort(), await freePort()];
  // BENCH_PROFILE_API=1 (probe.ts): the API is profiled too, into its own folder beside the worker's.
  const apiProfileDir = settings.profileDir && process.env.BENCH_PROFILE_API === '1' ? path.join(settings.profileDir, 'api') : undefined;
  const apiEnv = { ...env, PORT: String(apiPort), ...(apiProfileDir && { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${apiProfileDir}` }) }; // prettier-ignore
  const api = startEntryPoint(dir, 'api/main.ts', apiEnv, path.join(work, 'api.log'));
  cleanups.push(() => stopProcess(api));
  const profileDir = settings.profileDir && path.join(settings.profileDir, version.label.replace(/\W+/g, '-'));
  const workerEnv = { ...env, WORKER_METRICS_PORT: String(metricsPort), ...(profileDir && { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` }) }; // prettier-ignore
  const worker = startEntryPoint(dir, 'worker/main.ts', workerEnv, path.join(work, 'worker.log'));
  cleanups.push(async () => {
    await stopProcess(worker);
    if (profileDir) result.profiles = readdirSync(profileDir).map((file) => path.join(profileDir, file));
  });
  await Promise.all([
    waitReady(`http://127.0.0.1:${apiPort}/readyz`, api, 'API'),
    waitReady(`http://127.0.0.1:${metricsPort}/readyz`, worker, 'worker'),
  ]);
  const connection = await Connection.connect({ address: devServer.address });
  cleanups.push(() => connection.close());
  const temporal = new Client({ connection });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  say('API and worker ready');

  const roots = { api: api.pid, worker: worker.pid, temporal: devServer.child.pid, postgres: postgres.postmasterPid };
  const cpu = () => treeCpuSeconds(roots) as Cpu;

  // Registration: register → queryable is the POST's answer then a status read answering 200.
  const registrationMs: number[] = [];
  let codes = 0;
  let retried503 = 0;
  const register = async (id: string) => {
    const started = performance.now();
    // Spread over `postalCodes` codes, so the worker's statistics caches miss as real mail makes them.
    const postal = String(10000 + ((codes++ * 7919) % settings.postalCodes) * Math.floor(80000 / settings.postalCodes));
    // A 503 (Temporal did not answer within the API's deadline on a saturated machine) is retried,
    // as a client would: the time to queryable counts from the first attempt.
    let response: Response;
    for (let attempt = 1; ; attempt++) {
      response = await fetch(`${apiUrl}/v1/dispatches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, destination: { postal_code: postal, country_code: 'FR' } }),
      });
      if (response.status !== 503 || attempt === 5) break;
      await response.arrayBuffer();
      retried503 += 1;
      await sleep(500 * attempt);
    }
    if (response.status !== 201 && response.status !== 200)
      throw new Error(`registration answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    const read = await fetch(`${apiUrl}/v1/status/${id}`, { headers: { authorization: `Bearer ${key}` } });
    await read.arrayBuffer();
    if (read.status !== 200) throw new Error(`status read after registration answered ${read.status}`);
    registrationMs.push(performance.now() - started);
  };
  const registerAll = async (ids: string[]) => {
    await inParallel(ids, settings.registerConcurrency, register);
    await webhooks.settle(() => ids.every((id) => webhooks.countFor(id) > 0), 60_000, 1000);
  };

  // CPU per event: N in_transit events at the rate, to N cards registered just before.
  const ids = Array.from({ length: settings.dispatches }, () => randomUUID());
  const lifeIds = Array.from({ length: settings.lives }, () => randomUUID());
  await registerAll([...lifeIds, ...ids]);
  say(`registered ${ids.length + lifeIds.length}`);
  await sleep(2000);
  // Idle: what each process spends per second with no traffic; at `rate` events/s it adds
  // idle ÷ rate to the CPU per event below.
  const idleBefore = cpu();
  const idleStarted = performance.now();
  await sleep(IDLE_WINDOW_MS);
  const idleAfter = cpu();
  const idleS = (performance.now() - idleStarted) / 1000;
  result.idleCpuMsPerS = Object.fromEntries(PROCESSES.map((name) => [name, round(((idleAfter[name] - idleBefore[name]) * 1000) / idleS)])) as Cpu; // prettier-ignore
  say(`idle CPU ms/s: api ${result.idleCpuMsPerS.api}, worker ${result.idleCpuMsPerS.worker}`);
  // CPU over a window of `count` events, per event, by process and by worker thread.
  const cpuWindow = async (count: number, work: () => Promise<void>) => {
    const before = cpu();
    const threadsBefore = threadCpuSeconds(worker.pid!);
    const machineBefore = machineCpuSeconds();
    const started = performance.now();
    await work();
    const after = cpu();
    const threadsAfter = threadCpuSeconds(worker.pid!);
    const machineAfter = machineCpuSeconds();
    const perProcess = Object.fromEntries(PROCESSES.map((name) => [name, ((after[name] - before[name]) * 1000) / count])) as Cpu;
    return {
      cpuMs: {
        ...(Object.fromEntries(PROCESSES.map((name) => [name, round(perProcess[name])])) as Cpu),
        ours: round(perProcess.api + perProcess.worker),
        total: round(PROCESSES.reduce((sum, name) => sum + perProcess[name], 0)),
      },
      windowS: round((performance.now() - started) / 1000),
      machineBusyPercent: Math.round((100 * (machineAfter.busy - machineBefore.busy)) / (machineAfter.total - machineBefore.total)),
      workerThreadsCpuMs: Object.fromEntries(
        Object.entries(threadsAfter)
          .map(([name, seconds]): [string, number] => [name, round(((seconds - (threadsBefore[name] ?? 0)) * 1000) / count, 2)])
          .sort((a, b) => b[1] - a[1]),
      ),
    };
  };
  let sent = new Map<string, string>();
  const { workerThreadsCpuMs, ...perEvent } = await cpuWindow(ids.length, async () => {
    const window = await sendEvents(apiUrl, key, ids, settings.rate, 'in_transit');
    sent = window.occurredAt;
    if (window.accepted < ids.length) failures.push(`events: ${ids.length - window.accepted} POSTs not answered 202`);
    if (!(await webhooks.settle(() => ids.every((id) => webhooks.arrivedAt(id, 'in_transit') !== undefined), 120_000, 1000)))
      failures.push('events: not every in_transit status.updated arrived');
  });
  result.perEvent = perEvent;
  result.workerThreadsCpuMs = workerThreadsCpuMs;
  say(`CPU per event: ours ${result.perEvent.cpuMs.ours} ms, total ${result.perEvent.cpuMs.total} ms`);

  // The same events again, each with its occurred_at: every one a duplicate (logged as one, still
  // signalled, deduped by the workflow: one workflow task, no write, no webhook). What a carrier
  // event costs when it changes nothing, beside what a change costs above. Until the worker has
  // been quiet for a second after the last answer (its workflow tasks done).
  result.perRepeat = await cpuWindow(ids.length, async () => {
    const answers: Array<Promise<number>> = [];
    await steadyRate(settings.rate, ids.length, (i) => {
      answers.push(postCarrierEvent(apiUrl, key, ids[i], 'in_transit', sent.get(ids[i])).then((s) => s.httpStatus, () => 0)); // prettier-ignore
    });
    const accepted = (await Promise.all(answers)).filter((code) => code === 202).length;
    if (accepted < ids.length) failures.push(`repeats: ${ids.length - accepted} POSTs not answered 202`);
    for (let last = cpu().worker; ;) {
      await sleep(1000);
      const now = cpu().worker;
      if (now - last < 0.02) break;
      last = now;
    }
  });
  say(`CPU per repeated event: ours ${result.perRepeat.cpuMs.ours} ms, total ${result.perRepeat.cpuMs.total} ms`);

  // Whole lives: in_transit → out_for_delivery → delivered, then every run of each history.
  for (const status of ['in_transit', 'out_for_delivery', 'delivered']) {
    await sendEvents(apiUrl, key, lifeIds, settings.rate, status);
    if (!(await webhooks.settle(() => lifeIds.every((id) => webhooks.arrivedAt(id, status) !== undefined), 120_000, 1000)))
      failures.push(`lives: not every ${status} status.updated arrived`);
  }
  const lives = await Promise.all(lifeIds.map((id) => lifeHistory(temporal, id)));
  const med = (pick: (life: LifeHistory) => number) => median(lives.map(pick));
  result.life = {
    historyEvents: med((l) => l.events),
    historyBytes: med((l) => l.bytes),
    markers: med((l) => l.markers),
    workflowTasks: med((l) => l.workflowTasks),
    activities: med((l) => l.activities),
    runs: Math.max(...lives.map((l) => l.runs)),
  };
  say(`lives: ${result.life.historyEvents} history events, ${result.life.historyBytes} bytes`);

  // Capacity: each step's cards are registered first (not measured), then get one in_transit each, open loop.
  for (const rate of settings.steps) {
    const stepIds = Array.from({ length: rate * settings.stepSeconds }, () => randomUUID());
    await registerAll(stepIds);
    await sleep(1000);
    const cpuBefore = cpu();
    const busyBefore = machineCpuSeconds();
    const sent = await sendEvents(apiUrl, key, stepIds, rate, 'in_transit');
    await webhooks.settle(() => stepIds.every((id) => webhooks.arrivedAt(id, 'in_transit') !== undefined), 10_000, 0);
    const cpuAfter = cpu();
    const busyAfter = machineCpuSeconds();
    const latencies = stepIds.map((id) => (webhooks.arrivedAt(id, 'in_transit') ?? Infinity) - sent.sentAt.get(id)!);
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)];
    const step: Step = {
      rate,
      sent: stepIds.length,
      accepted: sent.accepted,
      missing: latencies.filter((ms) => ms === Infinity).length,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      maxMs: latencies[latencies.length - 1],
      oursCpuMsPerEvent: round(((cpuAfter.api - cpuBefore.api + cpuAfter.worker - cpuBefore.worker) * 1000) / stepIds.length),
      machineBusyPercent: Math.round((100 * (busyAfter.busy - busyBefore.busy)) / (busyAfter.total - busyBefore.total)),
    };
    result.steps!.push(step);
    say(`step ${rate}/s: p50 ${step.p50Ms} ms, p99 ${step.p99Ms} ms, ${step.missing} missing`);
    if (!(step.p99Ms <= settings.limitMs)) break;
    // Let the step's tail and its retries pass before the next one.
    await webhooks.settle(() => true, 0, 2000);
  }
  result.capacity = Math.max(0, ...result.steps!.filter((s) => s.p99Ms <= settings.limitMs).map((s) => s.rate));
  const sorted = [...registrationMs].sort((a, b) => a - b);
  result.registration = {
    count: sorted.length,
    p50Ms: Math.round(sorted[Math.floor(sorted.length / 2)]),
    p99Ms: Math.round(sorted[Math.ceil(0.99 * sorted.length) - 1]),
    retried503,
  };
  if (webhooks.unverified) failures.push(`${webhooks.unverified} webhooks whose signature did not verify`);
}

/** One `status` event per id at `rate`, open loop; when each was sent and how many were answered 202. */
async function sendEvents(apiUrl: string, key: string, ids: string[], rate: number, status: string) {
  const sentAt = new Map<string, number>();
  const occurredAt = new Map<string, string>();
  const sends: Array<Promise<number>> = [];
  await steadyRate(rate, ids.length, (i) => {
    sentAt.set(ids[i], Date.now());
    sends.push(
      postCarrierEvent(apiUrl, key, ids[i], status).then(
        (s) => (occurredAt.set(ids[i], s.occurredAt), s.httpStatus),
        () => 0,
      ),
    );
  });
  const accepted = (await Promise.all(sends)).filter((code) => code === 202).length;
  return { sentAt, occurredAt, accepted };
}

interface LifeHistory {
  events: number;
  bytes: number;
  workflowTasks: number;
  activities: number;
  markers: number;
  runs: number;
}

/** Every run of the dispatch's workflow, following continued-as-new links: events and protobuf bytes. */
async function lifeHistory(temporal: Client, workflowId: string): Promise<LifeHistory> {
  const life: LifeHistory = { events: 0, bytes: 0, workflowTasks: 0, activities: 0, markers: 0, runs: 0 };
  let runId: string | undefined;
  for (;;) {
    const history = await temporal.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    life.runs += 1;
    life.events += events.length;
    life.bytes += protos.temporal.api.history.v1.History.encode(history).finish().length;
    life.workflowTasks += events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
    life.activities += events.filter((e) => e.activityTaskScheduledEventAttributes).length;
    life.markers += events.filter((e) => e.markerRecordedEventAttributes).length;
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) return life;
  }
}
