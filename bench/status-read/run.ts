// `npm run bench:status-read`: GET /v1/status/{id} through the real API (startApi, every
// middleware, a real key, rate-limit counting, request logging at info) beside a bare node:http +
// pg server doing only the primary-key lookup, against the same database in the same run.
// Each server and each load run is its own process; rounds alternate the two servers so that the
// noise of a shared machine falls on both. Results go to results/<date>.md and .json (README.md).
// Options (env): BENCH_ROWS, BENCH_ROUNDS, BENCH_DURATION_S, BENCH_WARMUP_S, BENCH_CONNECTIONS,
// BENCH_CPU_PROF=1 (a V8 CPU profile of the API process), DATABASE_URL (else embedded Postgres).
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import { startPostgres } from '../../devtools/postgres.js';
import type { LoadResult } from './load.js';
import { firstJsonLine, machineCpuSeconds, postgresCpuSeconds, processCpuSeconds, REPO_ROOT, startScript, stopChild } from './processes.js';
import { summariseProfile } from './profile-summary.js';
import { pairedRatio, summarise, toMarkdown, type Result, type Round, type ServerName } from './report.js';
import { seed, unseed } from './seed.js';

const settings = {
  rows: Number(process.env.BENCH_ROWS ?? 100_000),
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  seconds: Number(process.env.BENCH_DURATION_S ?? 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP_S ?? 5),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 64),
};
const GOAL = 0.7;
// High enough that nothing is refused; every request is still counted in rate_limit_windows.
const RATE_LIMIT_PER_MINUTE = 1_000_000_000;
const RESULTS_DIR = path.join(REPO_ROOT, 'bench/status-read/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-status-read-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
const profileDir = process.env.BENCH_CPU_PROF ? path.join(work, 'profile') : undefined;

log(`Postgres: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded (throwaway)'}`);
const pg = await startPostgres({ dataDir: path.join(work, 'pg'), persistent: false });
const pool = createPool(pg.url, { max: 2, applicationName: 'bench-driver' });
// pool.end() resolves before its sockets close, so pg.stop() may still cut one: expected then.
let stopping = false;
pool.on('error', (error) => stopping || log(`idle Postgres client failed: ${error.message}`));
const children: Array<ReturnType<typeof startScript>> = [];
let seeded: Awaited<ReturnType<typeof seed>> | undefined;
try {
  await migrate(pg.url);
  seeded = await seed(pool, settings.rows);
  const { ids, key } = seeded;
  log(`seeded ${ids.length} dispatches in ${seeded.seedMs} ms`);
  const idsFile = path.join(work, 'ids.txt');
  writeFileSync(idsFile, ids.join('\n'));
  const logFile = path.join(work, 'api.log');
  const postmasterPid =
    pg.source === 'embedded' ? Number(readFileSync(path.join(work, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]) : undefined;

  const api = startScript(
    './api-server.ts',
    { DATABASE_URL: pg.url, RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE), BENCH_LOG_FILE: logFile, PORT: '0' },
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  const bare = startScript('./bare-server.ts', { DATABASE_URL: pg.url, PORT: '0' });
  children.push(api, bare);
  const servers: Record<ServerName, { url: string; pid: number }> = {
    api: { url: `http://127.0.0.1:${(await firstJsonLine<{ port: number }>(api, 'API server')).port}`, pid: api.pid! },
    bare: { url: `http://127.0.0.1:${(await firstJsonLine<{ port: number }>(bare, 'bare server')).port}`, pid: bare.pid! },
  };

  // Both servers must send exactly the stored record, and the API must really check the key.
  const expected = new Map(
    (
      await pool.query<{ id: string; record: string }>('SELECT id::text, record::text FROM dispatches WHERE id = ANY($1)', [
        ids.slice(0, 20),
      ])
    ).rows.map((r) => [r.id, r.record]),
  );
  let apiRequests = 0;
  for (const [id, record] of expected) {
    for (const name of ['api', 'bare'] as const) {
      const response = await fetch(`${servers[name].url}/v1/status/${id}`, { headers: { authorization: `Bearer ${key}` } });
      if (name === 'api') apiRequests++;
      const body = await response.text();
      if (response.status !== 200 || body !== record)
        throw new Error(`${name} answered ${response.status} ${body.slice(0, 200)} for ${id}`);
      if (name === 'api' && !response.headers.get('x-ratelimit-remaining')) throw new Error('API response without X-RateLimit-Remaining');
    }
  }
  const refused = await fetch(`${servers.api.url}/v1/status/${ids[0]}`, { headers: { authorization: 'Bearer cds_live_not-a-key' } });
  apiRequests++;
  if (refused.status !== 401) throw new Error(`API answered ${refused.status} to a bad key`);

  const runLoad = async (server: ServerName, seconds: number): Promise<Pick<Round, 'load' | 'cpu'>> => {
    const loader = startScript('./load.ts', {
      BENCH_URL: servers[server].url,
      BENCH_IDS_FILE: idsFile,
      BENCH_AUTH: key,
      BENCH_CONNECTIONS: String(settings.connections),
      BENCH_SECONDS: String(seconds),
    });
    // The loader reads the ids and loads autocannon before it starts: measure from the first request on,
    // approximately, by sampling CPU counters right away and dividing by the loader's own duration.
    const before = {
      server: processCpuSeconds(servers[server].pid),
      pg: postmasterPid ? postgresCpuSeconds(postmasterPid) : 0,
      machine: machineCpuSeconds(),
    };
    const load = await firstJsonLine<LoadResult>(loader, 'load generator');
    const machine = machineCpuSeconds();
    const after = { server: processCpuSeconds(servers[server].pid), pg: postmasterPid ? postgresCpuSeconds(postmasterPid) : 0 };
    await stopChild(loader);
    if (server === 'api') apiRequests += load.ok + load.non2xx;
    const cpu = {
      server: (after.server - before.server) / load.seconds,
      load: load.cpuS / load.seconds,
      postgres: postmasterPid ? (after.pg - before.pg) / load.seconds : null,
      machineBusyPercent: (100 * (machine.busy - before.machine.busy)) / (machine.total - before.machine.total),
    };
    return { load, cpu };
  };

  const rlBefore = await rateLimitWrites(pool);
  for (const server of ['api', 'bare'] as const) {
    const warm = await runLoad(server, settings.warmupSeconds);
    log(`warm-up ${server}: ${warm.load.rps} req/s`);
  }
  const rounds: Round[] = [];
  for (let n = 1; n <= settings.rounds; n++) {
    // api, bare, then bare, api: neither server always runs right after the other.
    for (const server of n % 2 ? (['api', 'bare'] as const) : (['bare', 'api'] as const)) {
      const { load, cpu } = await runLoad(server, settings.seconds);
      rounds.push({ round: n, server, load, cpu });
      log(
        `round ${n} ${server}: ${load.rps} req/s, p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms, non-2xx ${load.non2xx}, errors ${load.errors}`,
      );
    }
  }

  await stopChild(api); // its Postgres backends exit and flush their statistics
  await stopChild(bare);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const rlWrites = (await rateLimitWrites(pool)) - rlBefore;
  const logLines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"msg":"request"')).length;
  const failures = rounds.reduce((sum, r) => sum + r.load.non2xx + r.load.errors, 0);

  const apiSummary = summarise(rounds, 'api');
  const bareSummary = summarise(rounds, 'bare');
  const {
    rows: [pgVersion],
  } = await pool.query<{ server_version: string }>('SHOW server_version');
  const result: Result = {
    date: new Date().toISOString().slice(0, 10),
    settings,
    environment: {
      node: process.version,
      cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
      'load average at end (1 min)': os.loadavg()[0].toFixed(2),
      postgres: `${pgVersion.server_version} (${pg.source === 'embedded' ? 'embedded, fsync off' : 'DATABASE_URL'})`,
      'load generator': `autocannon, own process, ${settings.connections} connections, pipelining 1, random seeded ids`,
      'API logging': 'pino at info, one line per request, to a file in os.tmpdir()',
      'API rate limit': `RATE_LIMIT_PER_MINUTE=${RATE_LIMIT_PER_MINUTE} (nothing refused, every request counted)`,
      'pool size (each server)': 10,
    },
    checks: {
      'bodies identical to the stored record (20 ids, both servers)': true,
      'API refuses a bad key with 401': true,
      'non-2xx or errors during measured rounds': failures,
      'API requests sent (warm-up + rounds + checks)': apiRequests,
      'request log lines written by the API (≥ the requests sent: autocannon leaves uncounted the ≤ 64 in flight when a run stops)':
        logLines,
      'API log file size (MB)': (statSync(logFile).size / 1e6).toFixed(1),
      'rate-limit counter writes (UPDATE + INSERT on rate_limit_windows)': rlWrites,
      'requests per counter write': rlWrites ? Math.round(apiRequests / rlWrites) : 'n/a',
    },
    api: apiSummary,
    bare: bareSummary,
    ratio: Math.round((apiSummary.rps / bareSummary.rps) * 100) / 100,
    pairedRatio: pairedRatio(rounds),
    cpuPerRequestRatio: Math.round((apiSummary.serverCpuMsPerKRequest / bareSummary.serverCpuMsPerKRequest) * 100) / 100,
    goal: GOAL,
    rounds,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  let markdown = toMarkdown(result);
  if (profileDir) {
    // The main thread's profile (thread 0); a second one, tsx's loader thread, is left aside.
    const main = readdirSync(profileDir).find((name) => name.split('.')[4] === '0');
    if (main)
      markdown += [
        '',
        '## Where the API process spent its CPU (V8 profile)',
        '',
        ...summariseProfile(path.join(profileDir, main), apiRequests),
        '',
      ].join('\n');
  }
  // A profiled run is slower: its numbers never replace the plain run's.
  const name = profileDir ? `${result.date}-profiled` : result.date;
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${markdown}\n`);
  log(`written ${path.relative(REPO_ROOT, RESULTS_DIR)}/${name}.md and .json`);
  if (profileDir) log(`API CPU profile(s) in ${profileDir} (open in Chrome DevTools or speedscope)`);
  if (failures > 0) process.exitCode = 1;
} finally {
  for (const child of children) await stopChild(child);
  if (seeded && pg.source === 'DATABASE_URL') await unseed(pool, seeded);
  stopping = true;
  await pool.end();
  await pg.stop();
  // Only a CPU profile outlives the run.
  if (profileDir) for (const name of ['pg', 'api.log', 'ids.txt']) rmSync(path.join(work, name), { recursive: true, force: true });
  else rmSync(work, { recursive: true, force: true });
}

async function rateLimitWrites(db: typeof pool): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    "SELECT (n_tup_upd + n_tup_ins)::text AS n FROM pg_stat_user_tables WHERE relname = 'rate_limit_windows'",
  );
  return Number(rows[0]?.n ?? 0);
}
