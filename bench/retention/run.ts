// `npm run bench:retention` (README.md): the daily retention sweep on a year's backlog.
//  1. Bytes per dispatch: BENCH_REAL dispatches go through their whole life in the real service
//     (bench/scale/lifecycle.ts: registration, three carrier events, a signed webhook each); the
//     growth of every table and of Temporal's store (the dev server's SQLite file) is divided by them.
//  2. BENCH_DISPATCHES completed dispatches past RETENTION_DISPATCH are seeded straight in Postgres
//     (seed.ts: the rows a life leaves, no Temporal run), the real ones are made as old, and
//     BENCH_LIVE live dispatches are seeded for reads (bench/status-read/seed.ts).
//  3. Status reads of live dispatches (bench/status-read/load.ts, its own process) for
//     BENCH_LOAD_S without the sweep, then `retention run` (the same workflow and activity as the
//     daily Schedule, default windows) with the same reads running side by side until it ends, then
//     BENCH_LOAD_S without it again (the machine's drift meanwhile: other sessions share it).
// Results: results/<date>.md and .json, and the year's database size table (report.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { runRetentionSweep } from '../../temporal/client.js';
import { lifecyclePart } from '../scale/lifecycle.js';
import { log, startStack, TASK_QUEUE } from '../scale/setup.js';
import { firstJsonLine, machineCpuSeconds, REPO_ROOT, startScript } from '../status-read/processes.js';
import { startCpuMeter } from '../webhook-latency/load.js';
import { seed as seedLive } from '../status-read/seed.js';
import { toMarkdown, type BenchResult, type ReadWindow, type Sizes } from './report.js';
import { seedCompletedDispatches } from './seed.js';

const settings = {
  dispatches: Number(process.env.BENCH_DISPATCHES ?? 100_000),
  real: Number(process.env.BENCH_REAL ?? 300),
  live: Number(process.env.BENCH_LIVE ?? 20_000),
  loadSeconds: Number(process.env.BENCH_LOAD_S ?? 30),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  /** The worker's pause between two batches of the sweep (it inherits this environment): unset, the default. */
  batchPause: process.env.RETENTION_BATCH_PAUSE ?? 'default',
};
const DAY = 86_400_000;
const RESULTS_DIR = path.join(REPO_ROOT, 'bench/retention/results');

// Every retention window keeps its default.
const loadAverageAtStart = os.loadavg()[0];
const stack = await startStack('dev');
/** Every table of the application database with its indexes and TOAST, and Temporal's store. */
async function sizes(): Promise<Sizes> {
  const { rows } = await stack.pool.query<{ relname: string; bytes: string }>(
    'SELECT relname, pg_total_relation_size(relid)::text AS bytes FROM pg_statio_user_tables',
  );
  const { rows: db } = await stack.pool.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
  return {
    databaseBytes: Number(db[0].bytes),
    tableBytes: Object.fromEntries(rows.map((r) => [r.relname, Number(r.bytes)])),
    temporalStoreBytes: await stack.engine.storeBytes(),
  };
}
try {
  /** One window of reads, with the machine's CPU meanwhile: ours (every process of the stack and the load generator) and everyone else's. */
  const load = async (ids: string[], key: string, seconds: number): Promise<ReadWindow> => {
    const idsFile = path.join(os.tmpdir(), `cds-bench-retention-ids-${process.pid}.txt`);
    writeFileSync(idsFile, ids.join('\n'));
    const child = startScript('../status-read/load.ts', {
      BENCH_URL: stack.apiUrl,
      BENCH_IDS_FILE: idsFile,
      BENCH_AUTH: key,
      BENCH_CONNECTIONS: String(settings.connections),
      BENCH_SECONDS: String(seconds),
    });
    const meter = startCpuMeter(stack.cpu);
    const result = await firstJsonLine<ReadWindow['result']>(child, 'load generator');
    const { cores, machineBusyPercent } = meter();
    const ours = Object.values(cores).reduce((a, b) => a + b, 0) + result.cpuS / result.seconds;
    const machineCores = (machineBusyPercent / 100) * os.cpus().length;
    return {
      result,
      machineBusyPercent,
      loadAverage: Math.round(os.loadavg()[0] * 10) / 10,
      ourCores: Math.round(ours * 100) / 100,
      otherCores: Math.round(Math.max(0, machineCores - ours) * 100) / 100,
      cores,
    };
  };

  // 1. What one dispatch costs, from real ones.
  const before = await sizes();
  const lifecycle = await lifecyclePart(stack, { dispatches: settings.real, batchSize: 100, inflight: 16, historySample: 20 });
  const after = await sizes();
  log(`${settings.real} real dispatches through their life in ${lifecycle.totalSeconds} s`);
  const { rows: real } = await stack.pool.query<{ id: string }>(
    `SELECT d.id::text FROM dispatches d JOIN issuers i ON i.id = d.issuer_id WHERE i.name = 'Scale bench: lifecycle'`,
  );
  // Their runs must be closed before the sweep erases them: the API opened them with the default
  // DELIVERED_RETENTION (7 days), so the bench ends them now, standing for those 7 days.
  for (const { id } of real) await stack.temporal.workflow.getHandle(id).terminate('bench: stands for DELIVERED_RETENTION');

  // 2. The backlog, and the live dispatches read during the sweep.
  const seedStarted = performance.now();
  const { issuerId } = await stack.newIssuer('Retention bench: backlog');
  const endpoint = await createWebhookEndpoint(stack.pool, { issuerId, url: 'https://consumer.example/hooks', events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(endpoint.reason);
  await seedCompletedDispatches(stack.pool, {
    issuerId,
    endpointId: endpoint.endpoint.id,
    count: settings.dispatches,
    lastChangeAgoMs: 200 * DAY,
  });
  await stack.pool.query('VACUUM (ANALYZE)');
  const seeded = await sizes();
  await stack.pool.query(`UPDATE dispatches SET updated_at = now() - interval '200 days' WHERE id = ANY ($1::uuid[])`, [
    real.map((r) => r.id),
  ]);
  const live = await seedLive(stack.pool, settings.live);
  await stack.pool.query('VACUUM (ANALYZE)');
  // The seed's dirty pages written now, not by a checkpoint spread over the reads' first windows.
  await stack.pool.query('CHECKPOINT');
  const { rows: payload } = await stack.pool.query<{ bytes: number }>(
    `SELECT ((SELECT sum(octet_length(body)) FROM webhook_events e JOIN dispatches d ON d.id = e.dispatch_id AND d.issuer_id = $1)
           + (SELECT sum(coalesce(pg_column_size(request_headers), 0) + coalesce(octet_length(response_head), 0))
                FROM delivery_attempts a JOIN webhook_events e ON e.id = a.event_id JOIN dispatches d ON d.id = e.dispatch_id AND d.issuer_id = $1)
           )::float8 / $2 AS bytes`,
    [issuerId, settings.dispatches],
  );
  log(
    `seeded ${settings.dispatches} completed and ${settings.live} live dispatches in ${Math.round((performance.now() - seedStarted) / 1000)} s`,
  );

  // 3. Reads without the sweep, then with it.
  const baseline = await load(live.ids, live.key, settings.loadSeconds);
  log(`reads without the sweep: p99 ${baseline.result.p99Ms} ms, ${baseline.result.rps}/s, other processes ${baseline.otherCores} cores`);
  const cpuBefore = machineCpuSeconds();
  const sweepStarted = performance.now();
  const sweep = runRetentionSweep(stack.temporal, TASK_QUEUE);
  let done = false;
  void sweep.finally(() => (done = true)).catch(() => {});
  const during: ReadWindow[] = [];
  while (!done) during.push(await load(live.ids, live.key, settings.loadSeconds));
  const summary = await sweep;
  const sweepSeconds = (performance.now() - sweepStarted) / 1000;
  const cpuAfter = machineCpuSeconds();
  // The same reads once more without the sweep: how far the rest of the machine drifted meanwhile.
  const afterSweep = await load(live.ids, live.key, settings.loadSeconds);
  log(`reads without the sweep, after it: p99 ${afterSweep.result.p99Ms} ms, other processes ${afterSweep.otherCores} cores`);
  log(`sweep: ${JSON.stringify(summary)} in ${sweepSeconds.toFixed(1)} s`);
  const { rows: left } = await stack.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM dispatches WHERE updated_at < now() - interval '180 days'`,
  );
  const runsLeft = await stack.temporal.workflow.count(`TaskQueue = '${TASK_QUEUE}' AND WorkflowType = 'dispatchWorkflow'`);
  const swept = await sizes();

  const result: BenchResult = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load average before ${loadAverageAtStart.toFixed(2)}`,
    settings,
    real: { dispatches: real.length, before, after },
    seeded: {
      dispatches: settings.dispatches,
      tables: seeded.tableBytes,
      database: seeded.databaseBytes,
      payloadBytesPerDispatch: payload[0].bytes,
    },
    sweep: {
      seconds: sweepSeconds,
      summary,
      dueLeft: left[0].n,
      dispatchRunsLeft: runsLeft.count,
      machineBusyPercent: Math.round((100 * (cpuAfter.busy - cpuBefore.busy)) / Math.max(1e-9, cpuAfter.total - cpuBefore.total)),
      after: { tables: swept.tableBytes, database: swept.databaseBytes },
    },
    reads: { baseline, during, after: afterSweep },
    loadAverageAtEnd: os.loadavg()[0],
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stem = path.join(RESULTS_DIR, result.date.slice(0, 16).replace(':', ''));
  writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${stem}.md`, toMarkdown(result));
  process.stdout.write(toMarkdown(result));
} finally {
  await stack.stop();
}
