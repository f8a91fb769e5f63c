// `BENCH_SHAPE=today BENCH_SERVICE=1 npm run bench:prediction-quality` (run.ts): how often actual deliveries fall inside the windows the real
// service predicts, per confidence level, on a simulated carrier network (network.ts). It writes a
// year of history through the real `history import` command, declares the network's disruption with
// `conditions set`, registers held-out dispatches made today through POST /v1/dispatches of the real
// API and worker (embedded Postgres, Temporal dev server), reads each predicted window from the 201
// answer, and compares it with the delivery date the network draws for that card. A sample is then
// delivered through carrier events so that `predictions quality` can be checked against the same
// figures, and against the sample's own count of deliveries the model did not learn from. Results go to results/<date>.md and .json (README.md explains them). Options (env): README.md.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import type { ConfidenceLevel } from '../../domain/vocabulary.js';
import { businessDayOnOrAfter, businessDaysBetween } from '../../domain/calendar.js';
import { migrate } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import type { PredictionOutcome } from '../../domain/prediction-quality.js';
import { predict } from '../../domain/prediction.js';
import { freePort, startPostgres } from '../../devtools/postgres.js';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { startDevServer } from '../../devtools/temporal-dev-server.js';
import { firstJsonLine, REPO_ROOT, startScript, stopChild } from '../status-read/processes.js';
import { inParallel } from '../webhook-latency/load.js';
import { buildNetwork, deliveryDate, DISRUPTION, heldOut, history, prng, type HeldOutDispatch } from './network.js';
import { trueDistributions } from './oracle.js';
import { buildResult, toMarkdown, type CliReport, type Settings } from './report.js';
import { freeResultsName } from '../results-name.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings: Settings = {
  seed: env('BENCH_SEED', 20261122),
  heldOut: env('BENCH_HELD_OUT', 1500),
  historyDays: env('BENCH_HISTORY_DAYS', 365),
  concurrency: env('BENCH_CONCURRENCY', 16),
  deliverSample: env('BENCH_DELIVER_SAMPLE', 300),
};
const RESULTS_DIR = path.join(REPO_ROOT, 'bench/prediction-quality/results');
const TASK_QUEUE = 'bench-prediction-quality';
/** How long before today the check's dispatches were made, so that their deliveries lie in the past. */
const CHECK_DAYS_AGO = 45;
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
const today = new Date().toISOString().slice(0, 10);
const loadAtStart = os.loadavg()[0].toFixed(2);

/** `npm run admin -- <args> --json` as an operator runs it; its one JSON document. */
async function admin<T>(args: string[], databaseUrl: string): Promise<T> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/admin.ts', ...args, '--json'], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`admin ${args.join(' ')} failed (${code}): ${stderr.trim()}`);
  return JSON.parse(stdout) as T;
}

const random = prng(settings.seed);
const network = buildNetwork(random);
const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-quality-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
const [pg, cliPath] = await Promise.all([startPostgres({ dataDir: path.join(work, 'pg'), persistent: false }), resolveTemporalCli()]);
const devServer = await startDevServer({ cliPath, port: await freePort() });
const pool = createPool(pg.url, { max: 4, applicationName: 'bench-driver' });
let stopping = false;
pool.on('error', (error) => stopping || log(`idle Postgres client failed: ${error.message}`));
const children: Array<ReturnType<typeof startScript>> = [];
try {
  await migrate(pg.url);
  const issuerId = (await createIssuer(pool, 'Bench Issuer')).id;
  const key = (await createApiKey(pool, { issuerId, scopes: ['dispatches:write', 'events:write', 'status:read'], mode: 'live' }))!.key;

  // 1. History, through the operator's own import command (CSV → business days → COPY).
  const csvFile = path.join(work, 'history.csv');
  // Each code's past transit times (business days, counted as the import counts them), for the report.
  const historyTransit = new Map<string, number[]>();
  const csv = createWriteStream(csvFile);
  csv.write('postal_code,country_code,dispatch_date,delivered_date\n');
  for (const row of history(network, today, settings.historyDays, random)) {
    const areaKey = `${row.countryCode}:${row.postalCode}`;
    const transit = businessDaysBetween(businessDayOnOrAfter(row.dispatchDate, row.countryCode), row.deliveredDate, row.countryCode);
    const past = historyTransit.get(areaKey) ?? [];
    past.push(transit);
    historyTransit.set(areaKey, past);
    if (!csv.write(`${row.postalCode},${row.countryCode},${row.dispatchDate},${row.deliveredDate}\n`)) await once(csv, 'drain');
  }
  csv.end();
  await once(csv, 'close');
  const imported = await admin<{ imported: number; skipped: number }>(['history', 'import', csvFile], pg.url);
  log(`history: imported ${imported.imported} deliveries (skipped ${imported.skipped}) after ${elapsed()}`);
  // 2. The disruption an operator declares; the slowdown is left for the model to find.
  await admin(['conditions', 'set', '--country', DISRUPTION.country, '--postal-prefix', DISRUPTION.prefix, '--delay-days', String(DISRUPTION.days)], pg.url); // prettier-ignore

  // 3. The real worker and API, each in its own process, logging to files.
  const worker = startScript('../webhook-latency/worker-process.ts', {
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: devServer.address,
    TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    BENCH_LOG_FILE: path.join(work, 'worker.log'),
  });
  const api = startScript('../status-read/api-server.ts', {
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: devServer.address,
    TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    BENCH_LOG_FILE: path.join(work, 'api.log'),
    PORT: '0',
  });
  children.push(worker, api);
  const [{ port }] = await Promise.all([firstJsonLine<{ port: number }>(api, 'API'), firstJsonLine(worker, 'worker')]);
  const apiUrl = `http://127.0.0.1:${port}`;
  // A 503 says "retry shortly" (the workflow service busy, on a machine the run shares): retried as
  // an issuer would, a few times with a growing pause; both requests are idempotent (a registration
  // the first attempt made answers 200 with its record).
  let retried = 0;
  const call = async (method: string, url: string, body: unknown) => {
    for (let attempt = 1; ; attempt += 1) {
      const response = await fetch(`${apiUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = { status: response.status, body: (await response.json()) as Record<string, unknown> };
      if (answer.status !== 503 || attempt === 5) return answer;
      retried += 1;
      await new Promise((resolve) => setTimeout(resolve, attempt * 1000));
    }
  };
  log(`service ready after ${elapsed()}`);

  // 4. Held-out dispatches made today, registered one by one as an issuer would.
  const dispatches = heldOut(network, today, settings.heldOut, random);
  const registered: Array<HeldOutDispatch & { id: string; outcome: PredictionOutcome }> = [];
  const registrationsPerSecond = await inParallel(dispatches, settings.concurrency, async (dispatch) => {
    const id = randomUUID();
    const { area } = dispatch;
    const res = await call('POST', '/v1/dispatches', { id, destination: { postal_code: area.postalCode, country_code: area.countryCode } });
    if (res.status !== 201 && res.status !== 200) throw new Error(`registration answered ${res.status}: ${JSON.stringify(res.body)}`);
    const prediction = res.body.prediction as { delivery_window: { min: string; max: string }; confidence_level: ConfidenceLevel };
    registered.push({
      ...dispatch,
      id,
      outcome: { countryCode: area.countryCode, confidence: prediction.confidence_level, window: prediction.delivery_window, deliveredDate: dispatch.deliveredDate }, // prettier-ignore
    });
  });
  log(`registered ${registered.length} held-out dispatches (${registrationsPerSecond}/s) after ${elapsed()}`);

  // 5. The check: `predictions quality` must report what we compute for a delivered sample. A
  // carrier event dated after now is refused (docs/http-contract.md "Input bounds and integrity promises"), so the held-out
  // cards, delivered in the future, cannot be the sample: a second dispatch to each sampled card's
  // area, dispatched CHECK_DAYS_AGO days ago (its own PRNG: the held-out draws are untouched), is
  // registered and delivered on its simulated date, clamped to yesterday. Registered after every
  // held-out card, so its delivery joins no held-out card's history. Registered 45 days after its
  // dispatch, none teaches the model (docs/predictions.md "History and its bounds"), yet each counts
  // in the report (docs/prediction-quality.md "Quality"), which must say why: every one registered
  // late, and reported late where its delivered event, seconds after midnight UTC, is 3 or more days old.
  const every = Math.max(1, Math.floor(registered.length / settings.deliverSample));
  const checkRandom = prng(settings.seed + 2);
  const checkDispatchDate = new Date(Date.parse(`${today}T00:00:00Z`) - CHECK_DAYS_AGO * 86_400_000).toISOString().slice(0, 10);
  const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  const reportedLateBy = new Date(Date.parse(`${today}T00:00:00Z`) - 3 * 86_400_000).toISOString().slice(0, 10);
  const toCheck = registered
    .filter((_, i) => i % every === 0)
    .slice(0, settings.deliverSample)
    .map((d) => {
      const deliveredDate = deliveryDate(d.area, checkDispatchDate, CHECK_DAYS_AGO, checkRandom);
      return { area: d.area, deliveredDate: deliveredDate < today ? deliveredDate : yesterday };
    });
  const sample: PredictionOutcome[] = [];
  await inParallel(toCheck, settings.concurrency, async (d) => {
    const id = randomUUID();
    const destination = { postal_code: d.area.postalCode, country_code: d.area.countryCode };
    const res = await call('POST', '/v1/dispatches', { id, destination, dispatch_date: `${checkDispatchDate}T12:00:00Z` });
    if (res.status !== 201 && res.status !== 200) throw new Error(`check registration answered ${res.status}: ${JSON.stringify(res.body)}`);
    const prediction = res.body.prediction as { delivery_window: { min: string; max: string }; confidence_level: ConfidenceLevel };
    const delivered = await call('POST', `/v1/dispatches/${id}/events`, { status: 'delivered', occurred_at: `${d.deliveredDate}T00:00:30Z` }); // prettier-ignore
    if (delivered.status !== 202) throw new Error(`carrier event answered ${delivered.status}: ${JSON.stringify(delivered.body)}`);
    sample.push({ countryCode: d.area.countryCode, confidence: prediction.confidence_level, window: prediction.delivery_window, deliveredDate: d.deliveredDate }); // prettier-ignore
  });
  // Every sampled dispatch delivered: its outcome is written with its delivered version.
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM dispatches WHERE status = 'delivered'");
    if (rows[0].n >= sample.length) break;
  }
  const cli = await admin<CliReport>(['predictions', 'quality'], pg.url);
  const expectedNotLearned = {
    dispatches: sample.length,
    late_registration: sample.length,
    late_report: sample.filter((d) => d.deliveredDate <= reportedLateBy).length,
    delivered_before_dispatch: 0,
  };
  log(`delivered a sample of ${sample.length} and ran predictions quality after ${elapsed()}`);

  // 6. The report: by confidence level, by kind of area, beside the foundation's table.
  const result = buildResult({
    date: today,
    settings,
    registered,
    historyTransit,
    foundation: registered.map((d) => {
      const dispatchDate = `${today}T12:00:00Z`;
      const destination = { postal_code: d.area.postalCode, country_code: d.area.countryCode };
      const { window, confidence } = predict({
        dispatchDate,
        destination,
        state: { status: 'dispatched', statusSince: dispatchDate },
        today,
      });
      return { ...d.outcome, window, confidence };
    }),
    sample,
    cli,
    expectedNotLearned,
    oracle: trueDistributions(),
    environment: {
      'history rows imported': imported.imported,
      'registrations per second (POST /v1/dispatches, update-with-start)': registrationsPerSecond,
      node: process.version,
      cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
      'load average (1 min) at start / end': `${loadAtStart} / ${os.loadavg()[0].toFixed(2)}`,
      'requests retried after a 503': retried,
      'run wall time': elapsed(),
    },
  });
  const markdown = toMarkdown(result);
  const name = freeResultsName(RESULTS_DIR, today);
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${markdown}\n`);
  log(`written ${path.relative(REPO_ROOT, RESULTS_DIR)}/${name}.md and .json after ${elapsed()}`);
  if (!result.cliMatches) process.exitCode = 1;
} finally {
  for (const child of children.reverse()) await stopChild(child);
  stopping = true;
  await pool.end();
  await devServer.stop();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
