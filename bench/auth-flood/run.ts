// `npm run bench:auth-flood`: a flood of forged-key requests against the real API process, with a
// valid key polling from the same client address at the same time (docs/security.md "Rate limits"). Measures what the flood costs the database (counted in the
// API process, cross-checked with pg_stat_database), what the clients get, and whether the valid key
// keeps its full rate. Results go to results/<date>.md and .json (README.md).
// Options (env): BENCH_FORGED (10000), BENCH_CONNECTIONS (32), BENCH_VALID_CONNECTIONS (4),
// BENCH_VALID_RPS (250), RATE_LIMIT_PER_MINUTE (1000), RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE (100).
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import { generateKey } from '../../domain/api-keys.js';
import { startPostgres } from '../../devtools/postgres.js';
import { firstJsonLine, machineCpuSeconds, REPO_ROOT, stopChild } from '../status-read/processes.js';
import { seed } from '../status-read/seed.js';
import type { QueryCounts } from './api-server.js';

const settings = {
  forged: Number(process.env.BENCH_FORGED ?? 10_000),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  validConnections: Number(process.env.BENCH_VALID_CONNECTIONS ?? 4),
  validRps: Number(process.env.BENCH_VALID_RPS ?? 250),
  keyLimit: Number(process.env.RATE_LIMIT_PER_MINUTE ?? 1000),
  ipLimit: Number(process.env.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE ?? 100),
};
const RESULTS_DIR = path.join(REPO_ROOT, 'bench/auth-flood/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sample {
  status: number;
  ms: number;
}

function get(agent: http.Agent, url: string, authorization: string): Promise<Sample> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { authorization } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const median = (values: number[]) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.floor(sorted.length / 2)].toFixed(2));
};

function countStatuses(samples: Sample[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status } of samples) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-auth-flood-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
log(`Postgres: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded (throwaway)'}`);
const pg = await startPostgres({ dataDir: path.join(work, 'pg'), persistent: false });
const pool = createPool(pg.url, { max: 2, applicationName: 'bench-driver' });
let stopping = false;
pool.on('error', (error) => stopping || log(`idle Postgres client failed: ${error.message}`));
let api: ReturnType<typeof spawn> | undefined;
try {
  await migrate(pg.url);
  const seeded = await seed(pool, 100);
  const validHeader = `Bearer ${seeded.key}`;
  api = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./api-server.ts', import.meta.url))], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: pg.url,
      RATE_LIMIT_PER_MINUTE: String(settings.keyLimit),
      RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: String(settings.ipLimit),
      BENCH_VALID_LOOKUP: seeded.key.slice('cds_live_'.length, 'cds_live_'.length + 12),
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const base = `http://127.0.0.1:${(await firstJsonLine<{ port: number }>(api, 'API server')).port}`;
  const child = api;
  const counts = () =>
    new Promise<QueryCounts>((resolve) => {
      child.once('message', (message) => resolve(message as QueryCounts));
      child.send('counts');
    });
  const xacts = async () =>
    Number(
      (await pool.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0].n,
    );
  const statusUrl = (i: number) => `${base}/v1/status/${seeded.ids[i % seeded.ids.length]}`;
  const forgedHeaders = Array.from({ length: settings.forged }, () => `Bearer ${generateKey('live').key}`);

  // Both windows are per minute: start in a minute's first 20 s so the run stays in one window.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 20_000) {
    log(`waiting ${Math.round((60_500 - intoMinute) / 1000)} s for the next minute's window`);
    await sleep(60_500 - intoMinute);
  }
  // The valid key has been used once on this API process (as any client that has used its key).
  const warmup = await get(new http.Agent(), statusUrl(0), validHeader);
  if (warmup.status !== 200) throw new Error(`the valid key's first request got ${warmup.status}`);

  const countsBefore = await counts();
  const xactsBefore = await xacts();
  const cpuBefore = machineCpuSeconds();
  const loadBefore = os.loadavg();
  const windowAtStart = Math.floor(Date.now() / 60_000);
  const started = performance.now();

  // The flood: every request a new forged key (valid checksum, no row), `connections` at a time.
  const forgedAgent = new http.Agent({ keepAlive: true, maxSockets: settings.connections });
  const forged: Sample[] = [];
  let nextForged = 0;
  let floodDone = false;
  const flood = Promise.all(
    Array.from({ length: settings.connections }, async () => {
      while (nextForged < settings.forged) {
        const i = nextForged++;
        forged.push(await get(forgedAgent, statusUrl(i), forgedHeaders[i]));
      }
    }),
  ).then(() => {
    floodDone = true;
    return performance.now();
  });

  // The valid key, from the same address, paced at BENCH_VALID_RPS until the flood is over and it
  // has asked for more than its limit.
  const validAgent = new http.Agent({ keepAlive: true, maxSockets: settings.validConnections });
  const valid: Array<Sample & { duringFlood: boolean }> = [];
  let validSent = 0;
  const validTarget = settings.keyLimit + 50; // the warm-up took one slot
  const validRun = Promise.all(
    Array.from({ length: settings.validConnections }, async () => {
      while (!floodDone || validSent < validTarget) {
        const due = started + (validSent * 1000) / settings.validRps;
        validSent++;
        if (due > performance.now()) await sleep(due - performance.now());
        const duringFlood = !floodDone;
        valid.push({ ...(await get(validAgent, statusUrl(validSent), validHeader)), duringFlood });
      }
    }),
  ).then(() => performance.now());

  const [floodEnded, validEnded] = await Promise.all([flood, validRun]);
  const windowAtEnd = Math.floor(Date.now() / 60_000);
  const cpuAfter = machineCpuSeconds();
  const loadAfter = os.loadavg();
  forgedAgent.destroy();
  validAgent.destroy();
  const countsAfter = await counts();
  // A backend may hold its transaction counts for up to 10 s before reporting them; it reports them
  // when it exits, so the API process (and with it its connections) is stopped first.
  await stopChild(api);
  await sleep(500);
  const xactsAfter = await xacts();

  const floodSeconds = (floodEnded - started) / 1000;
  const windows = windowAtEnd - windowAtStart + 1;
  const delta = (name: keyof Omit<QueryCounts, 'other'>) => countsAfter[name] - countsBefore[name];
  const forgedRoundTrips = delta('keyLookups') + delta('ipWindowStatements');
  const bound = windows * (2 * settings.ipLimit + 2) + Math.ceil(floodSeconds) + 1;
  const validAdmitted = valid.filter((s) => s.status === 200).length + 1; // + the warm-up
  const otherQueries: Record<string, number> = {};
  for (const [text, n] of Object.entries(countsAfter.other)) {
    const d = n - (countsBefore.other[text] ?? 0);
    if (d > 0) otherQueries[text] = d;
  }
  const { rows } = await pool.query<{ server_version: string }>('SHOW server_version');
  const date = new Date().toISOString().slice(0, 10);

  const result = {
    date: new Date().toISOString(),
    settings,
    environment: {
      node: process.version,
      postgres: `${rows[0].server_version} (${pg.source === 'embedded' ? 'embedded, fsync off' : 'DATABASE_URL'})`,
      cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
      'load average before (1/5/15 min)': loadBefore.map((n) => n.toFixed(2)).join(' / '),
      'load average after (1/5/15 min)': loadAfter.map((n) => n.toFixed(2)).join(' / '),
      'machine CPU busy during the run': `${(((cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total)) * 100).toFixed(0)} %`,
    },
    windows,
    forged: {
      requests: forged.length,
      seconds: Number(floodSeconds.toFixed(2)),
      statuses: countStatuses(forged),
      medianMs: median(forged.map((s) => s.ms)),
      medianMsBy: {
        401: median(forged.filter((s) => s.status === 401).map((s) => s.ms)),
        429: median(forged.filter((s) => s.status === 429).map((s) => s.ms)),
      },
      keyLookups: delta('keyLookups'),
      ipWindowStatements: delta('ipWindowStatements'),
      roundTrips: forgedRoundTrips,
      bound,
      withinBound: forgedRoundTrips <= bound,
    },
    valid: {
      limit: settings.keyLimit,
      requests: valid.length + 1,
      duringFlood: valid.filter((s) => s.duringFlood).length,
      admitted: validAdmitted,
      admittedDuringFlood: valid.filter((s) => s.duringFlood && s.status === 200).length,
      statuses: countStatuses([warmup, ...valid]),
      medianMs200: median(valid.filter((s) => s.status === 200).map((s) => s.ms)),
      medianMs200DuringFlood: median(valid.filter((s) => s.duringFlood && s.status === 200).map((s) => s.ms)),
      seconds: Number(((validEnded - started) / 1000).toFixed(2)),
      keyLookups: delta('validKeyLookups'),
      keyWindowStatements: delta('keyWindowStatements'),
      projectionReads: delta('projectionReads'),
    },
    database: {
      apiQueriesTotal: countsAfter.total - countsBefore.total,
      otherQueries,
      pgStatTransactions: xactsAfter - xactsBefore - 1, // less the driver's own first read
    },
  };

  const f = result.forged;
  const v = result.valid;
  const markdown = `# auth-flood, ${result.date}

${f.requests} forged-key requests (each a new key with a valid checksum) from one client address,
${settings.connections} keep-alive connections, while a valid key polls from the same address at
${settings.validRps}/s on ${settings.validConnections} connections. RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE=${settings.ipLimit},
RATE_LIMIT_PER_MINUTE=${settings.keyLimit}. ${windows} rate-limit window(s) touched.

| forged-key flood            |                                              |
| --------------------------- | -------------------------------------------- |
| duration                    | ${f.seconds} s |
| responses                   | ${Object.entries(f.statuses)
    .map(([s, n]) => `${n} × ${s}`)
    .join(', ')} |
| median latency              | ${f.medianMs} ms (401: ${f.medianMsBy[401]} ms, 429: ${f.medianMsBy[429]} ms) |
| DB round trips (API pool)   | **${f.roundTrips}**: ${f.keyLookups} key lookups + ${f.ipWindowStatements} IP-window statements |
| bound (windows × (2 × IP limit + 2) + seconds + 1) | ${f.bound} (${f.withinBound ? 'within' : 'EXCEEDED'}) |

| valid key (same address)    |                                              |
| --------------------------- | -------------------------------------------- |
| requests                    | ${v.requests} (${v.duringFlood} while the flood ran) |
| admitted (200) vs its limit | **${v.admitted} / ${v.limit}** (${v.admittedDuringFlood} admitted during the flood) |
| responses                   | ${Object.entries(v.statuses)
    .map(([s, n]) => `${n} × ${s}`)
    .join(', ')} |
| median latency of a 200     | ${v.medianMs200} ms (during the flood: ${v.medianMs200DuringFlood} ms) |
| its DB round trips          | ${v.keyLookups} key lookups, ${v.keyWindowStatements} key-window statements, ${v.projectionReads} projection reads |

All queries of the API process during the run: ${result.database.apiQueriesTotal}
(other: ${JSON.stringify(result.database.otherQueries)}); Postgres' own count of committed and
rolled-back transactions in the database over the same span, read after the API process (and its
connections) stopped (pg_stat_database, less the driver's own first read; it also counts any
autovacuum work): ${result.database.pgStatTransactions}.

Machine: ${result.environment.cpu}, Node ${result.environment.node}, Postgres ${result.environment.postgres};
load average ${result.environment['load average before (1/5/15 min)']} before, ${result.environment['load average after (1/5/15 min)']} after;
CPU busy during the run ${result.environment['machine CPU busy during the run']} (shared with other work).
`;
  process.stdout.write(markdown);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(path.join(RESULTS_DIR, `${date}.md`), markdown);
  writeFileSync(path.join(RESULTS_DIR, `${date}.json`), `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote results/${date}.md and .json`);
} finally {
  stopping = true;
  if (api) await stopChild(api);
  await pool.end();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
