// `npm run bench:tracking-page`: requests/s of the cardholder's tracking page, GET /t/{token}, beside
// the JSON status read, GET /v1/status/{id}, for the same dispatches, through one real API process
// (bench/status-read/api-server.ts: startApi with every middleware, request logging at info, both
// rate limits counting every request) in the same run. Rounds alternate the two reads so that the
// noise of a shared machine falls on both. Goal (README.md): the page serves at least a third of
// the JSON read's requests/s. Results go to results/<date>.md and .json.
// Options (env): BENCH_ROWS, BENCH_LINKS, BENCH_ROUNDS, BENCH_DURATION_S, BENCH_WARMUP_S,
// BENCH_CONNECTIONS, BENCH_CPU_PROF=1 (a V8 CPU profile of the API process, page rounds only, summarised
// into results/<date>-profiled.md), DATABASE_URL (else embedded Postgres).
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../db/migrate.js';
import { createPool, type Pool } from '../../db/pool.js';
import { updateBranding } from '../../db/tracking-links.js';
import { newTrackingToken } from '../../domain/tracking-links.js';
import { startPostgres } from '../../devtools/postgres.js';
import type { LoadResult } from '../status-read/load.js';
import {
  firstJsonLine,
  machineCpuSeconds,
  postgresCpuSeconds,
  processCpuSeconds,
  REPO_ROOT,
  startScript,
  stopChild,
} from '../status-read/processes.js';
import { summariseProfile } from '../status-read/profile-summary.js';
import { median } from '../status-read/report.js';
import { seed } from '../status-read/seed.js';

const settings = {
  rows: Number(process.env.BENCH_ROWS ?? 20_000),
  links: Number(process.env.BENCH_LINKS ?? 5_000),
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  seconds: Number(process.env.BENCH_DURATION_S ?? 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP_S ?? 5),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 64),
};
const GOAL = 1 / 3;
// High enough that nothing is refused; every request is still counted (key window, page IP window).
const UNLIMITED = '1000000000';
const RESULTS_DIR = path.join(REPO_ROOT, 'bench/tracking-page/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

type Read = 'status' | 'page';
interface Round {
  round: number;
  read: Read;
  load: LoadResult;
  serverCpuPerSecond: number;
  /** CPU seconds of the embedded Postgres per second (null with DATABASE_URL). */
  postgresCpuPerSecond: number | null;
  machineBusyPercent: number;
}

/** One link per dispatch for the first `count` ids, their applied carrier events, and the issuer's branding. */
async function seedLinks(pool: Pool, issuerId: string, ids: string[], count: number): Promise<string[]> {
  const chosen = ids.slice(0, count);
  const tokens = chosen.map(() => newTrackingToken());
  await pool.query(
    `INSERT INTO tracking_links (id, dispatch_id, issuer_id, mode, token_hash, expires_at)
     SELECT 'tl_' || substr(md5(d::text), 1, 16), d, $1, 'live', h, now() + interval '60 days'
       FROM unnest($2::uuid[], $3::bytea[]) AS t (d, h)`,
    [issuerId, chosen, tokens.map((t) => t.hash)],
  );
  // The carrier events that set each seeded status, as the worker would have recorded them.
  await pool.query(
    `INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at, reason, effect)
     SELECT d.id, s.status || ':bench', s.status, d.dispatch_date + s.n * interval '1 day', s.reason, 'applied'
       FROM dispatches d
       JOIN (VALUES (1, 'in_transit', NULL, '{in_transit,out_for_delivery,delivered,exception}'::text[]),
                    (2, 'out_for_delivery', NULL, '{out_for_delivery,delivered}'::text[]),
                    (3, 'delivered', NULL, '{delivered}'::text[]),
                    (2, 'exception', 'failed_attempt', '{exception}'::text[])) AS s (n, status, reason, for_statuses)
         ON d.status = ANY (s.for_statuses)
      WHERE d.id = ANY ($1::uuid[])`,
    [chosen],
  );
  await updateBranding(pool, issuerId, {
    display_name: 'Benchmark Bank',
    accent_color: '#0b5cad',
    activation_url: 'https://bank.example/activate',
    support_url: 'https://bank.example/help',
  });
  return tokens.map((t) => t.token);
}

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-tracking-page-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
log(`Postgres: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded (throwaway)'}`);
const pg = await startPostgres({ dataDir: path.join(work, 'pg'), persistent: false });
const pool = createPool(pg.url, { max: 2, applicationName: 'bench-driver' });
let stopping = false;
pool.on('error', (error) => stopping || log(`idle Postgres client failed: ${error.message}`));
const children: Array<ReturnType<typeof startScript>> = [];
try {
  await migrate(pg.url);
  const seeded = await seed(pool, settings.rows);
  const tokens = await seedLinks(pool, seeded.issuerId, seeded.ids, settings.links);
  const ids = seeded.ids.slice(0, settings.links);
  log(`seeded ${seeded.ids.length} dispatches, ${tokens.length} links`);
  const files: Record<Read, string> = { status: path.join(work, 'status.txt'), page: path.join(work, 'page.txt') };
  writeFileSync(files.status, ids.map((id) => `/v1/status/${id}`).join('\n'));
  writeFileSync(files.page, tokens.map((token) => `/t/${token}`).join('\n'));

  const profileDir = process.env.BENCH_CPU_PROF ? path.join(work, 'profile') : undefined;
  const api = startScript(
    './api-server.ts',
    {
      DATABASE_URL: pg.url,
      RATE_LIMIT_PER_MINUTE: UNLIMITED,
      TRACKING_PAGE_RATE_PER_MINUTE: UNLIMITED,
      BENCH_LOG_FILE: path.join(work, 'api.log'),
      PORT: '0',
    },
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  children.push(api);
  const postmasterPid =
    pg.source === 'embedded' ? Number(readFileSync(path.join(work, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]) : undefined;
  const url = `http://127.0.0.1:${(await firstJsonLine<{ port: number }>(api, 'API server')).port}`;

  // Both reads must answer 200 with what they promise, for the same dispatches.
  for (let i = 0; i < 10; i++) {
    const status = await fetch(`${url}/v1/status/${ids[i]}`, { headers: { authorization: `Bearer ${seeded.key}` } });
    if (status.status !== 200) throw new Error(`status read answered ${status.status}`);
    const page = await fetch(`${url}/t/${tokens[i]}`);
    const html = await page.text();
    if (page.status !== 200 || !html.includes('Benchmark Bank') || !html.includes('class="steps"'))
      throw new Error(`page answered ${page.status}: ${html.slice(0, 200)}`);
  }

  const runLoad = async (read: Read, seconds: number): Promise<Omit<Round, 'round' | 'read'>> => {
    const loader = startScript('../status-read/load.ts', {
      BENCH_URL: url,
      BENCH_PATHS_FILE: files[read],
      BENCH_AUTH: read === 'status' ? seeded.key : '',
      BENCH_CONNECTIONS: String(settings.connections),
      BENCH_SECONDS: String(seconds),
    });
    const pgCpu = () => (postmasterPid ? postgresCpuSeconds(postmasterPid) : 0);
    const before = { server: processCpuSeconds(api.pid!), pg: pgCpu(), machine: machineCpuSeconds() };
    const load = await firstJsonLine<LoadResult>(loader, 'load generator');
    const machine = machineCpuSeconds();
    const serverCpu = processCpuSeconds(api.pid!) - before.server;
    const postgresCpu = pgCpu() - before.pg;
    await stopChild(loader);
    return {
      load,
      serverCpuPerSecond: serverCpu / load.seconds,
      postgresCpuPerSecond: postmasterPid ? postgresCpu / load.seconds : null,
      machineBusyPercent: (100 * (machine.busy - before.machine.busy)) / (machine.total - before.machine.total),
    };
  };

  for (const read of ['status', 'page'] as const) log(`warm-up ${read}: ${(await runLoad(read, settings.warmupSeconds)).load.rps} req/s`);
  const rounds: Round[] = [];
  for (let n = 1; n <= settings.rounds; n++) {
    for (const read of n % 2 ? (['status', 'page'] as const) : (['page', 'status'] as const)) {
      const measured = await runLoad(read, settings.seconds);
      rounds.push({ round: n, read, ...measured });
      log(`round ${n} ${read}: ${measured.load.rps} req/s, p50 ${measured.load.p50Ms} ms, p99 ${measured.load.p99Ms} ms, non-2xx ${measured.load.non2xx}`); // prettier-ignore
    }
  }
  const pageBytes = (await (await fetch(`${url}/t/${tokens[0]}`)).text()).length;
  await stopChild(api);

  const rps = (round: number, read: Read) => rounds.find((r) => r.round === round && r.read === read)!.load.rps;
  const summary = (read: Read) => {
    const mine = rounds.filter((r) => r.read === read);
    const rps = median(mine.map((r) => r.load.rps));
    return {
      rps,
      p50Ms: median(mine.map((r) => r.load.p50Ms)),
      p99Ms: median(mine.map((r) => r.load.p99Ms)),
      serverCpuMsPerRequest: Math.round((median(mine.map((r) => r.serverCpuPerSecond)) / rps) * 1e5) / 100,
      postgresCpuMsPerRequest: postmasterPid ? Math.round((median(mine.map((r) => r.postgresCpuPerSecond!)) / rps) * 1e5) / 100 : null,
      failures: mine.reduce((sum, r) => sum + r.load.non2xx + r.load.errors, 0),
    };
  };
  const status = summary('status');
  const page = summary('page');
  const ratio = Math.round((page.rps / status.rps) * 100) / 100;
  // Each round measures both reads back to back: their ratio is less exposed to the machine's other work.
  const pairedRatio =
    Math.round(median([...new Set(rounds.map((r) => r.round))].map((n) => rps(n, 'page') / rps(n, 'status'))) * 100) / 100;
  const result = {
    date: new Date().toISOString().slice(0, 10),
    settings,
    environment: {
      node: process.version,
      cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
      'load average at end (1 min)': os.loadavg()[0].toFixed(2),
      postgres: pg.source === 'embedded' ? 'embedded, fsync off' : 'DATABASE_URL',
      'load generator': `autocannon, own process, ${settings.connections} connections, pipelining 1, random paths of the same dispatches`,
      'API logging': 'pino at info, one line per request, to a file in os.tmpdir()',
    },
    status,
    page,
    ratio,
    pairedRatio,
    goal: Math.round(GOAL * 100) / 100,
    met: ratio >= GOAL,
    pageBytes,
    rounds,
  };
  const markdown = [
    `# Tracking page vs status read, ${result.date}`,
    '',
    `Goal: GET /t/{token} serves at least ${result.goal} of GET /v1/status/{id}'s requests/s. **${result.met ? 'Met' : 'Missed'}: ${ratio}** (ratio of the medians; median of the per-round ratios ${pairedRatio}).`,
    '',
    '| read | req/s (median) | p50 ms | p99 ms | API CPU ms / request | Postgres CPU ms / request | failures |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| GET /v1/status/{id} | ${status.rps} | ${status.p50Ms} | ${status.p99Ms} | ${status.serverCpuMsPerRequest} | ${status.postgresCpuMsPerRequest ?? '—'} | ${status.failures} |`,
    `| GET /t/{token} | ${page.rps} | ${page.p50Ms} | ${page.p99Ms} | ${page.serverCpuMsPerRequest} | ${page.postgresCpuMsPerRequest ?? '—'} | ${page.failures} |`,
    '',
    `Settings: ${JSON.stringify(settings)}. Page size ${pageBytes} bytes.`,
    '',
    ...Object.entries(result.environment).map(([k, v]) => `- ${k}: ${v}`),
    '',
    '| round | read | req/s | p50 ms | p99 ms | API CPU s/s | Postgres CPU s/s | machine busy % |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rounds.map(
      (r) =>
        `| ${r.round} | ${r.read} | ${r.load.rps} | ${r.load.p50Ms} | ${r.load.p99Ms} | ${r.serverCpuPerSecond.toFixed(2)} | ${r.postgresCpuPerSecond?.toFixed(2) ?? '—'} | ${r.machineBusyPercent.toFixed(0)} |`,
    ),
    '',
  ].join('\n');
  mkdirSync(RESULTS_DIR, { recursive: true });
  if (profileDir) {
    // A profiled run is slower, and its profile holds both reads: it never replaces a plain run's numbers.
    const main = readdirSync(profileDir).find((name) => name.split('.')[4] === '0');
    const requests = rounds.reduce((sum, r) => sum + r.load.ok, 0);
    const profile = main ? summariseProfile(path.join(profileDir, main), requests) : [];
    writeFileSync(path.join(RESULTS_DIR, `${result.date}-profiled.md`), [markdown, '## Where the API process spent its CPU (both reads)', '', ...profile, ''].join('\n')); // prettier-ignore
  } else {
    writeFileSync(path.join(RESULTS_DIR, `${result.date}.md`), markdown);
    writeFileSync(path.join(RESULTS_DIR, `${result.date}.json`), `${JSON.stringify(result, null, 2)}\n`);
  }
  process.stdout.write(markdown);
} finally {
  for (const child of children) await stopChild(child);
  stopping = true;
  await pool.end();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
