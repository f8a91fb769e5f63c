// The processes of one scale run, each on its own, all on 127.0.0.1: embedded Postgres (migrated),
// the Temporal engine (engine.ts), and the webhook-latency benchmark's receiver, product worker and
// (status-read's) API processes, started with that benchmark's helpers. CPU per process as that
// benchmark counts it, resident memory from /proc (memory.ts).
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import { migrate } from '../../db/migrate.js';
import { createPool, type Pool } from '../../db/pool.js';
import { startPostgres } from '../../devtools/postgres.js';
import type { WorkerMemoryReport } from '../webhook-latency/report.js';
import {
  firstJsonLine,
  IMAGE_ENV,
  postgresCpuSeconds,
  processCpuSeconds,
  startScript,
  stopChild,
  WORKER_DEPLOY_ENV,
} from '../status-read/processes.js';
import { ArrivalStream, type CpuCounter } from '../webhook-latency/load.js';
import { startEngine, type Engine, type EngineKind } from './engine.js';
import type { MemorySource } from './memory.js';

export const TASK_QUEUE = 'bench-scale';
export const log = (message: string) => process.stderr.write(`[bench:scale] ${message}\n`);

export interface Stack {
  engine: Engine;
  pool: Pool;
  temporal: Client;
  apiUrl: string;
  receiverUrl: string;
  arrivals: ArrivalStream;
  /** Where the driver writes the one webhook endpoint's secret (the receiver reads it at the first request). */
  secretFile: string;
  cpu: Record<string, CpuCounter>;
  memory: Record<string, MemorySource>;
  postgresVersion: string;
  /** Where the worker's memory is (its report, bench/webhook-latency/worker-process.ts). */
  workerMemoryReport(): Promise<WorkerMemoryReport>;
  /** A new issuer and live key with every scope the bench uses. */
  newIssuer(name: string): Promise<{ issuerId: string; key: string }>;
  stop(): Promise<void>;
}

export async function startStack(kind: EngineKind, options: { workerEnv?: Record<string, string> } = {}): Promise<Stack> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-scale-'));
  chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
  const pg = await startPostgres({ dataDir: path.join(work, 'pg'), persistent: false });
  const engine = await startEngine(kind, work);
  const pool = createPool(pg.url, { max: 4, applicationName: 'bench-driver' });
  let stopping = false;
  pool.on('error', (error) => stopping || log(`idle Postgres client failed: ${error.message}`));
  const connection = await Connection.connect({ address: engine.address });
  const temporal = new Client({ connection });
  const children: Array<ReturnType<typeof startScript>> = [];
  const logFile = (name: string) => path.join(work, `${name}.log`);
  const secretFile = path.join(work, 'endpoint-secret');
  const stop = async () => {
    for (const child of children.reverse()) await stopChild(child);
    stopping = true;
    await connection.close();
    await pool.end();
    await engine.stop();
    await pg.stop();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    await migrate(pg.url);
    const receiver = startScript('../webhook-latency/receiver-process.ts', { BENCH_SECRET_FILE: secretFile });
    children.push(receiver);
    const arrivals = new ArrivalStream(receiver);
    const { url: receiverUrl } = await arrivals.ready;
    const worker = startScript('../webhook-latency/worker-process.ts', {
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: engine.address,
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      BENCH_LOG_FILE: logFile('worker'),
      ...IMAGE_ENV,
      ...WORKER_DEPLOY_ENV,
      ...options.workerEnv,
    });
    const api = startScript('../status-read/api-server.ts', {
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: engine.address,
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      BENCH_LOG_FILE: logFile('api'),
      PORT: '0',
    });
    children.push(worker, api);
    const [{ port }] = await Promise.all([firstJsonLine<{ port: number }>(api, 'API'), firstJsonLine(worker, 'worker')]);
    const postmasterPid =
      pg.source === 'embedded' ? Number(readFileSync(path.join(work, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]) : 0;
    const {
      rows: [version],
    } = await pool.query<{ server_version: string }>('SHOW server_version');
    return {
      engine,
      pool,
      temporal,
      apiUrl: `http://127.0.0.1:${port}`,
      receiverUrl,
      arrivals,
      secretFile,
      cpu: {
        worker: () => processCpuSeconds(worker.pid!),
        api: () => processCpuSeconds(api.pid!),
        temporal: () => processCpuSeconds(engine.pid),
        ...(engine.postgresPid ? { "temporal's postgres": () => postgresCpuSeconds(engine.postgresPid!) } : {}),
        postgres: () => (postmasterPid ? postgresCpuSeconds(postmasterPid) : 0),
        receiver: () => processCpuSeconds(receiver.pid!),
        driver: () => {
          const usage = process.cpuUsage();
          return (usage.user + usage.system) / 1e6;
        },
      },
      memory: {
        worker: { kind: 'process', pid: () => worker.pid },
        api: { kind: 'process', pid: () => api.pid },
        temporal: { kind: 'process', pid: () => engine.pid },
        ...(engine.postgresPid
          ? { "temporal's postgres (Pss of all its processes)": { kind: 'postgres' as const, pid: () => engine.postgresPid } }
          : {}),
        'postgres (Pss of all its processes)': { kind: 'postgres', pid: () => postmasterPid || undefined },
        receiver: { kind: 'process', pid: () => receiver.pid },
        driver: { kind: 'process', pid: () => process.pid },
      },
      async workerMemoryReport() {
        const reported = firstJsonLine<{ memory: WorkerMemoryReport }>(worker, 'worker memory report');
        worker.kill('SIGWINCH');
        return (await reported).memory;
      },
      postgresVersion: `${version.server_version} (${pg.source === 'embedded' ? 'embedded, fsync off' : 'DATABASE_URL'})`,
      async newIssuer(name) {
        const issuerId = (await createIssuer(pool, name)).id;
        const key = (await createApiKey(pool, { issuerId, scopes: ['status:read', 'dispatches:write', 'events:write'], mode: 'live' }))!
          .key;
        return { issuerId, key };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** POST with the key, JSON both ways. */
export async function postJson(url: string, key: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** Registers `items` in one POST /v1/dispatches/batch; throws unless every item was created. Returns its ms. */
export async function registerBatch(apiUrl: string, key: string, items: unknown[]): Promise<number> {
  const started = performance.now();
  const { status, body } = await postJson(`${apiUrl}/v1/dispatches/batch`, key, { dispatches: items });
  const ms = performance.now() - started;
  if (status !== 200) throw new Error(`batch answered ${status}: ${JSON.stringify(body).slice(0, 500)}`);
  const results = (body as { results: Array<{ result: string; error?: unknown }> }).results;
  const failed = results.filter((r) => r.result !== 'created');
  if (failed.length) throw new Error(`${failed.length} batch items not created, e.g. ${JSON.stringify(failed[0])}`);
  return ms;
}
