// One side of the event-cost benchmark: a version of the service on fresh infrastructure of its own
// (infrastructure.ts), driven only from outside (HTTP, its admin CLI, the Temporal client, reads of
// pg_stat_*). Measures what one `in_transit` carrier event costs (statements, transactions, CPU per
// process, webhooks) and how many workflow history events one dispatch's whole life records, then
// stops everything it started, whatever happened.
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../devtools/postgres.js';
import { machineCpuSeconds, startScript, stopChild } from '../status-read/processes.js';
import { median } from '../status-read/report.js';
import { inParallel, postCarrierEvent, sleep, steadyRate } from '../webhook-latency/load.js';
import { Arrivals } from './arrivals.js';
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
  withClient,
} from './infrastructure.js';
import { readStatements, readTransactions, resetStatements, treeCpuSeconds, type StatementRow } from './meters.js';
import type { VersionTree } from './versions.js';

export interface Settings {
  dispatches: number;
  lives: number;
  rate: number;
  registerConcurrency: number;
  /** Quiet time after the last arrival before a phase counts as settled. */
  quietMs: number;
  /** Wait before each pg_stat_database read (idle backends report their counts within ~10 s). */
  statsFlushMs: number;
  timeoutS: number;
  logLevel: string;
}

export const PROCESSES = ['api', 'worker', 'temporal', 'postgres'] as const;
export type ProcessName = (typeof PROCESSES)[number];

export interface SideResult {
  label: string;
  source: string;
  commit: string;
  uncommittedFiles: number;
  lockFileDiffers: boolean;
  failures: string[];
  events: {
    sent: number;
    accepted: number;
    /** Wall seconds from the first send to the snapshot (1 quiet second after the last arrival). */
    windowS: number;
    machineBusyPercent: number;
  };
  perEvent: {
    statements: number;
    statementsWithoutUtility: number;
    /** Statements inside functions and triggers (foreign-key checks among them): track = all. */
    nestedStatements: number;
    transactions: number;
    rollbacks: number;
    cpuMs: Record<ProcessName | 'total', number>;
    webhooks: number;
    webhooksByType: Record<string, number>;
  };
  /** CPU ms per second of each process while nothing was sent (just before the events). */
  idleCpuMsPerS: Record<ProcessName | 'total', number>;
  statements: Array<StatementRow & { perEvent: number }>;
  statementDeallocations: number;
  /** Workflows other than the events' dispatch workflows started while the events ran, by type. */
  otherWorkflows: Record<string, number>;
  life: {
    dispatches: number;
    historyEvents: { median: number; min: number; max: number };
    workflowTasks: number;
    activities: number;
    localActivityMarkers: number;
    signals: number;
    runs: number;
    webhooks: number;
  };
  registration: { dispatches: number; perSecond: number; webhooks: number };
  environment: { postgres: string; temporal: string; webhookEventTypes: string[] };
  retries: number;
  unverified: number;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Each running side's temp folder, for run.ts to remove when a signal ends the run. */
export const workDirs = new Set<string>();

export async function measureSide(version: VersionTree, settings: Settings, cliPath: string, log: (message: string) => void) {
  const say = (message: string) => log(`${version.label}: ${message}`);
  const cleanups: Array<() => Promise<void> | void> = [];
  const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-event-cost-'));
  chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
  workDirs.add(work);
  cleanups.push(() => {
    rmSync(work, { recursive: true, force: true });
    workDirs.delete(work);
  });
  try {
    return await measure(version, settings, cliPath, say, work, cleanups);
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
}

async function measure(
  version: VersionTree,
  settings: Settings,
  cliPath: string,
  say: (message: string) => void,
  work: string,
  cleanups: Array<() => Promise<void> | void>,
): Promise<SideResult> {
  const failures: string[] = [];
  // Filled in phase by phase below.
  const result: Partial<SideResult> = {};
  const dir = version.dir;
  const postgres = await startStatsPostgres(path.join(work, 'pg'));
  cleanups.push(() => postgres.pg.stop());
  await migrateVersion(dir, postgres.url);
  const devServer = await startVersionDevServer(dir, cliPath, path.join(work, 'temporal.sqlite'));
  cleanups.push(() => devServer.stop());
  say(`Postgres (pg_stat_statements) and Temporal ${devServer.address} up, migrated`);

  const secretFile = path.join(work, 'endpoint-secret');
  const receiver = track(startScript('../webhook-latency/receiver-process.ts', { BENCH_SECRET_FILE: secretFile }));
  cleanups.push(() => stopChild(receiver));
  const arrivals = new Arrivals(receiver);
  const { url: receiverUrl } = await arrivals.ready;

  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: devServer.address,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_PER_MINUTE: '1000000000',
    // The hourly refresh runs on the hour (an interval Schedule): kept out of the measured window.
    PREDICTION_REFRESH_INTERVAL: '24h',
    LOG_LEVEL: settings.logLevel,
    HOST: '127.0.0.1',
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
  };
  const types = await webhookEventTypes(dir, env);
  const issuer = await admin<{ id: string }>(dir, env, 'issuer', 'create', '--name', 'Bench Event Cost');
  const { key } = await admin<{ key: string }>(dir, env, 'key', 'create', '--issuer', issuer.id);
  const endpoint = await admin<{ secret: string }>(dir, env, 'webhook', 'add', '--issuer', issuer.id, '--url', receiverUrl, '--events', types.join(',')); // prettier-ignore
  writeFileSync(secretFile, endpoint.secret);

  const [apiPort, metricsPort] = [await freePort(), await freePort()];
  const api = startEntryPoint(dir, 'api/main.ts', { ...env, PORT: String(apiPort) }, path.join(work, 'api.log'));
  cleanups.push(() => stopProcess(api));
  const worker = startEntryPoint(
    dir,
    'worker/main.ts',
    { ...env, WORKER_METRICS_PORT: String(metricsPort) },
    path.join(work, 'worker.log'),
  );
  cleanups.push(() => stopProcess(worker));
  await Promise.all([
    waitReady(`http://127.0.0.1:${apiPort}/readyz`, api, 'API'),
    waitReady(`http://127.0.0.1:${metricsPort}/readyz`, worker, 'worker'),
  ]);
  const connection = await Connection.connect({ address: devServer.address });
  cleanups.push(() => connection.close());
  const temporal = new Client({ connection });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  say(`API ${apiUrl} and worker ready; endpoint subscribed to ${types.length} event types`);

  const roots = { api: api.pid, worker: worker.pid, temporal: devServer.child.pid, postgres: postgres.postmasterPid };
  const cpu = () => treeCpuSeconds(roots) as Record<ProcessName, number>;
  const timeoutMs = settings.timeoutS * 1000;

  // 1. Registration: N + K dispatches, until every one's registration webhooks have arrived.
  const ids = Array.from({ length: settings.dispatches }, () => randomUUID());
  const lifeIds = Array.from({ length: settings.lives }, () => randomUUID());
  const register = async (id: string) => {
    const response = await fetch(`${apiUrl}/v1/dispatches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, destination: { postal_code: '75011', country_code: 'FR' } }),
    });
    if (response.status !== 201) throw new Error(`registration answered ${response.status}: ${await response.text()}`);
  };
  const registrationsPerSecond = await inParallel([...ids, ...lifeIds], settings.registerConcurrency, register);
  if (!(await arrivals.settle(() => [...ids, ...lifeIds].every((id) => arrivals.countFor(id) > 0), timeoutMs, 2000)))
    failures.push('registration: not every dispatch had a webhook');
  const registrationWebhooks = arrivals.total;
  say(`registered ${ids.length + lifeIds.length} (${registrationsPerSecond}/s), ${registrationWebhooks} webhooks`);

  await withClient(postgres.statsUrl, async (stats) => {
    // 2. Idle: what the processes use with nothing sent, over the wait for Postgres's counters.
    const idleStart = cpu();
    const idleStarted = performance.now();
    await sleep(settings.statsFlushMs);
    const idleEnd = cpu();
    const idleS = (performance.now() - idleStarted) / 1000;
    const idle = Object.fromEntries(PROCESSES.map((name) => [name, round(((idleEnd[name] - idleStart[name]) * 1000) / idleS, 1)]));

    // 3. One in_transit event per dispatch at the rate, counted from just before the first send to
    //    one quiet second after the last webhook they fired.
    const xactBefore = await readTransactions(stats, postgres.database);
    await resetStatements(stats);
    const typesBefore = new Map(arrivals.byType);
    const arrivedBefore = arrivals.total;
    const cpuBefore = cpu();
    const machineBefore = machineCpuSeconds();
    const windowStartedAt = new Date();
    const started = performance.now();
    const sends: Array<Promise<number>> = [];
    await steadyRate(settings.rate, ids.length, (i) => {
      sends.push(
        postCarrierEvent(apiUrl, key, ids[i], 'in_transit').then(
          (sent) => sent.httpStatus,
          () => 0,
        ),
      );
    });
    const statuses = await Promise.all(sends);
    const accepted = statuses.filter((status) => status === 202).length;
    if (accepted < ids.length) failures.push(`events: ${ids.length - accepted} of ${ids.length} POSTs not answered 202`);
    const takeSnapshot = async () => ({
      cpu: cpu(),
      machine: machineCpuSeconds(),
      seconds: (performance.now() - started) / 1000,
      arrived: arrivals.total,
      types: arrivals.typesSince(typesBefore),
      statements: await readStatements(stats, postgres.database),
    });
    const done = () => ids.every((id) => arrivals.has(id, 'status.updated', 'in_transit'));
    if (!(await arrivals.settle(done, timeoutMs, settings.quietMs)))
      failures.push(`events: not every in_transit status.updated arrived within ${settings.timeoutS} s`);
    let snapshot = await takeSnapshot();
    // A webhook that arrives after the snapshot belongs to the events too: settle again and retake.
    for (let i = 0; i < 5; i++) {
      await sleep(2000);
      if (arrivals.total === snapshot.arrived) break;
      await arrivals.settle(() => true, 0, settings.quietMs);
      snapshot = await takeSnapshot();
    }
    await sleep(settings.statsFlushMs);
    const xactAfter = await readTransactions(stats, postgres.database);
    const n = ids.length;
    const cpuMs = Object.fromEntries(PROCESSES.map((name) => [name, ((snapshot.cpu[name] - cpuBefore[name]) * 1000) / n])) as Record<
      ProcessName,
      number
    >;
    const { rows, deallocations } = snapshot.statements;
    const sum = (list: StatementRow[]) => list.reduce((total, row) => total + row.calls, 0);
    const otherWorkflows = await workflowsStartedSince(temporal, windowStartedAt, new Set(ids));
    say(
      `events: ${round(sum(rows) / n)} statements, ${round((xactAfter.commit + xactAfter.rollback - xactBefore.commit - xactBefore.rollback) / n)} transactions, ${round(
        Object.values(cpuMs).reduce((a, b) => a + b, 0),
        1,
      )} ms CPU per event`,
    );
    Object.assign(result, {
      events: {
        sent: n,
        accepted,
        windowS: round(snapshot.seconds, 1),
        machineBusyPercent: Math.round(
          (100 * (snapshot.machine.busy - machineBefore.busy)) / (snapshot.machine.total - machineBefore.total),
        ),
      },
      perEvent: {
        statements: round(sum(rows) / n),
        statementsWithoutUtility: round(sum(rows.filter((row) => !row.utility)) / n),
        nestedStatements: round(sum(rows.filter((row) => !row.toplevel)) / n),
        transactions: round((xactAfter.commit + xactAfter.rollback - xactBefore.commit - xactBefore.rollback) / n),
        rollbacks: round((xactAfter.rollback - xactBefore.rollback) / n),
        cpuMs: {
          ...mapValues(cpuMs, (v) => round(v, 1)),
          total: round(
            Object.values(cpuMs).reduce((a, b) => a + b, 0),
            1,
          ),
        },
        webhooks: round((snapshot.arrived - arrivedBefore) / n),
        webhooksByType: mapValues(snapshot.types, (v) => round(v / n)),
      },
      idleCpuMsPerS: {
        ...idle,
        total: round(
          Object.values(idle).reduce((a, b) => a + b, 0),
          1,
        ),
      },
      statements: rows.map((row) => ({ ...row, perEvent: round(row.calls / n, 3) })),
      statementDeallocations: deallocations,
      otherWorkflows,
    });
  });

  // 4. Whole lives: register (done above) → in_transit → out_for_delivery → delivered, each step at
  //    the rate once the previous step's status.updated has arrived for every dispatch.
  for (const status of ['in_transit', 'out_for_delivery', 'delivered']) {
    const sends: Array<Promise<number>> = [];
    await steadyRate(settings.rate, lifeIds.length, (i) => {
      sends.push(
        postCarrierEvent(apiUrl, key, lifeIds[i], status).then(
          (sent) => sent.httpStatus,
          () => 0,
        ),
      );
    });
    const refused = (await Promise.all(sends)).filter((code) => code !== 202).length;
    if (refused) failures.push(`lives: ${refused} ${status} POSTs not answered 202`);
    if (!(await arrivals.settle(() => lifeIds.every((id) => arrivals.has(id, 'status.updated', status)), timeoutMs, settings.quietMs)))
      failures.push(`lives: not every ${status} status.updated arrived within ${settings.timeoutS} s`);
  }
  await arrivals.settle(() => true, 0, 2000);
  const lives: LifeHistory[] = [];
  await inParallel(lifeIds, 4, async (id) => void lives.push(await lifeHistory(temporal, id)));
  const historyEvents = lives.map((life) => life.events);
  say(`lives: median ${median(historyEvents)} history events`);

  const pgVersion = await withClient(
    postgres.statsUrl,
    async (stats) => (await stats.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v,
  );
  if (arrivals.unverified) failures.push(`${arrivals.unverified} webhooks whose X-Service-Signature did not verify`);
  Object.assign(result, {
    label: version.label,
    source: version.source,
    commit: version.commit,
    uncommittedFiles: version.uncommittedFiles,
    lockFileDiffers: version.lockFileDiffers,
    failures,
    life: {
      dispatches: lives.length,
      historyEvents: { median: median(historyEvents), min: Math.min(...historyEvents), max: Math.max(...historyEvents) },
      workflowTasks: median(lives.map((life) => life.workflowTasks)),
      activities: median(lives.map((life) => life.activities)),
      localActivityMarkers: median(lives.map((life) => life.markers)),
      signals: median(lives.map((life) => life.signals)),
      runs: Math.max(...lives.map((life) => life.runs)),
      webhooks: median(lifeIds.map((id) => arrivals.countFor(id))),
    },
    registration: { dispatches: ids.length + lifeIds.length, perSecond: registrationsPerSecond, webhooks: registrationWebhooks },
    environment: {
      postgres: `${pgVersion} (embedded, fsync off, pg_stat_statements track = all)`,
      temporal: `${execFileSync(cliPath, ['--version'], { encoding: 'utf8' }).trim()}, dev server, SQLite file`,
      webhookEventTypes: types,
    },
    retries: arrivals.retries,
    unverified: arrivals.unverified,
  });
  return result as SideResult;
}

function mapValues<T, U>(record: Record<string, T>, f: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, f(value)]));
}

interface LifeHistory {
  events: number;
  workflowTasks: number;
  activities: number;
  markers: number;
  signals: number;
  runs: number;
}

/** Every run of the dispatch's workflow (id = dispatch id), newest first, following continued-as-new links. */
async function lifeHistory(temporal: Client, workflowId: string): Promise<LifeHistory> {
  const life: LifeHistory = { events: 0, workflowTasks: 0, activities: 0, markers: 0, signals: 0, runs: 0 };
  let runId: string | undefined;
  for (;;) {
    const events = (await temporal.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    life.runs += 1;
    life.events += events.length;
    life.workflowTasks += events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
    life.activities += events.filter((e) => e.activityTaskScheduledEventAttributes).length;
    life.markers += events.filter((e) => e.markerRecordedEventAttributes).length;
    life.signals += events.filter((e) => e.workflowExecutionSignaledEventAttributes).length;
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) return life;
  }
}

/** Workflows started since `since` that are not the events' dispatch workflows, by type (the visibility store). */
async function workflowsStartedSince(temporal: Client, since: Date, dispatchIds: Set<string>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  try {
    for await (const workflow of temporal.workflow.list({ query: `StartTime >= '${since.toISOString()}'` })) {
      if (dispatchIds.has(workflow.workflowId)) continue;
      counts[workflow.type] = (counts[workflow.type] ?? 0) + 1;
    }
  } catch (error) {
    counts[`(visibility query failed: ${(error as Error).message.slice(0, 80)})`] = 1;
  }
  return counts;
}
