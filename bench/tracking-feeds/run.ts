// `npm run bench:tracking-feeds`: what an inbound tracking-feed request costs beside
// POST /v1/dispatches/{id}/events for the same change, in one run on one set of processes
// (README.md): SQL statements and CPU per request for one new checkpoint in a 20-checkpoint body,
// the statements and Temporal calls of a body whose checkpoints were all seen, and the time to the
// answer at BENCH_LATENCY_RATE (50) requests a second, each side by side with POST …/events. The
// infrastructure is bench/event-cost's (pg_stat_statements with track = all, a Temporal dev server,
// the API and worker as processes of this checkout, the signature-checking receiver); cards go to
// many postal codes. Results: results/<date>.md and .json.
import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../devtools/postgres.js';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { Arrivals } from '../event-cost/arrivals.js';
import { admin, migrateVersion, startEntryPoint, startStatsPostgres, startVersionDevServer, stopProcess, track, waitReady, withClient } from '../event-cost/infrastructure.js'; // prettier-ignore
import { readStatements, resetStatements, treeCpuSeconds, type StatementRow } from '../event-cost/meters.js';
import { REPO_ROOT } from '../status-read/processes.js';
import { percentile } from '../webhook-latency/breakdown.js';
import { sleep, steadyRate } from '../webhook-latency/load.js';
import { freeResultsName } from '../results-name.js';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const N = num('BENCH_DISPATCHES', 300);
const RATE = num('BENCH_RATE', 10);
const LATENCY_RATE = num('BENCH_LATENCY_RATE', 50);
const CHECKPOINTS = 20;
const SECRET = 'bench-tracking-feeds-secret';
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? path.join(REPO_ROOT, 'bench/tracking-feeds/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const HOUR = 3_600_000;
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
delete process.env.DATABASE_URL;

const failures: string[] = [];
type Phase = {
  name: string;
  requests: number;
  statements: number;
  statementsAll: number;
  cpuMs: Record<string, number>;
  top: StatementRow[];
};

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-feeds-'));
chmodSync(work, 0o755);
const cleanups: Array<() => Promise<void> | void> = [() => rmSync(work, { recursive: true, force: true })];
try {
  await main();
} finally {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch((e: Error) => log(`clean-up: ${e.message}`));
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg().map((n) => round(n));
  const postgres = await startStatsPostgres(path.join(work, 'pg'));
  cleanups.push(() => postgres.pg.stop());
  await migrateVersion(REPO_ROOT, postgres.url);
  const devServer = await startVersionDevServer(REPO_ROOT, await resolveTemporalCli(), path.join(work, 'temporal.sqlite'));
  cleanups.push(() => devServer.stop());
  const secretFile = path.join(work, 'endpoint-secret');
  const receiver = track(spawn(process.execPath, ['--import', 'tsx', 'bench/webhook-latency/receiver-process.ts'], { cwd: REPO_ROOT, env: { ...process.env, BENCH_SECRET_FILE: secretFile }, stdio: ['ignore', 'pipe', 'inherit'] })); // prettier-ignore
  cleanups.push(() => stopProcess(receiver));
  const arrivals = new Arrivals(receiver);
  const { url: receiverUrl } = await arrivals.ready;

  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: devServer.address,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_PER_MINUTE: '1000000000',
    FEED_RATE_PER_MINUTE: '1000000000',
    PREDICTION_REFRESH_INTERVAL: '24h',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    HOST: '127.0.0.1',
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
  };
  const issuer = await admin<{ id: string }>(REPO_ROOT, env, 'issuer', 'create', '--name', 'Bench Tracking Feeds');
  const { key } = await admin<{ key: string }>(REPO_ROOT, env, 'key', 'create', '--issuer', issuer.id);
  const endpoint = await admin<{ secret: string }>(REPO_ROOT, env, 'webhook', 'add', '--issuer', issuer.id, '--url', receiverUrl, '--events', 'status.updated'); // prettier-ignore
  writeFileSync(secretFile, endpoint.secret);
  const [apiPort, metricsPort] = [await freePort(), await freePort()];
  const api = startEntryPoint(REPO_ROOT, 'api/main.ts', { ...env, PORT: String(apiPort) }, path.join(work, 'api.log'));
  cleanups.push(() => stopProcess(api));
  const worker = startEntryPoint(
    REPO_ROOT,
    'worker/main.ts',
    { ...env, WORKER_METRICS_PORT: String(metricsPort) },
    path.join(work, 'worker.log'),
  );
  cleanups.push(() => stopProcess(worker));
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  await Promise.all([waitReady(`${apiUrl}/readyz`, api, 'API'), waitReady(`http://127.0.0.1:${metricsPort}/readyz`, worker, 'worker')]);
  const connection = await Connection.connect({ address: devServer.address });
  cleanups.push(() => connection.close());
  const temporal = new Client({ connection });
  const roots = { api: api.pid, worker: worker.pid, temporal: devServer.child.pid, postgres: postgres.postmasterPid };
  const call = (pathname: string, body: string, headers: Record<string, string>) =>
    fetch(`${apiUrl}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const feed = (await (await call('/v1/tracking_feeds', JSON.stringify({ provider: 'easypost', secret: SECRET }), { authorization: `Bearer ${key}` })).json()) as { id: string }; // prettier-ignore
  log(`API ${apiUrl}, worker, Temporal ${devServer.address} and feed ${feed.id} ready`);

  // Dispatches: half take POST …/events, half a feed; each to its own postal code (many codes, as real mail).
  const dispatchDate = Date.now() - 10 * 24 * HOUR;
  const make = () => ({
    id: randomUUID(),
    tracking: `BENCH${Math.floor(Math.random() * 1e12)}`,
    postal: String(10000 + Math.floor(Math.random() * 85000)),
  });
  const events = Array.from({ length: N }, make);
  const feeds = Array.from({ length: N }, make);
  const register = async (d: ReturnType<typeof make>) => {
    const body = { id: d.id, tracking_number: d.tracking, dispatch_date: new Date(dispatchDate).toISOString(), destination: { postal_code: d.postal, country_code: 'FR' } }; // prettier-ignore
    // A 503 (Temporal slow on a loaded machine) is retried, as a client would.
    for (let attempt = 1; ; attempt++) {
      const res = await call('/v1/dispatches', JSON.stringify(body), { authorization: `Bearer ${key}` });
      if (res.status === 201 || res.status === 200) return;
      if (res.status !== 503 || attempt === 5) throw new Error(`registration answered ${res.status}: ${await res.text()}`);
      await sleep(1000);
    }
  };
  for (let i = 0; i < 2 * N; i += 16) await Promise.all([...events, ...feeds].slice(i, i + 16).map(register));
  log(`registered ${2 * N} dispatches`);

  // A 20-checkpoint history in EasyPost's shape: 19 scans, then the change (or `extra` more).
  const scans = Array.from({ length: CHECKPOINTS - 1 }, (_, i) => ({ status: 'in_transit', datetime: new Date(dispatchDate + (i + 1) * 8 * HOUR).toISOString() })); // prettier-ignore
  const bodyOf = (tracking: string, tail: Array<{ status: string; datetime: string }>, skip = 0) =>
    JSON.stringify({ object: 'Event', description: 'tracker.updated', result: { id: `trk_${tracking}`, object: 'Tracker', tracking_code: tracking, carrier: 'La Poste', tracking_details: [...scans.slice(skip), ...tail].map((t) => ({ ...t, message: t.status, tracking_location: { city: 'Paris', country: 'FR' } })) } }); // prettier-ignore
  const postFeed = (raw: string) => call(`/v1/inbound/${feed.id}`, raw, { 'x-hmac-signature': `hmac-sha256-hex=${createHmac('sha256', SECRET).update(raw).digest('hex')}` }); // prettier-ignore
  const postEvent = (id: string, status: string, at: number) =>
    call(`/v1/dispatches/${id}/events`, JSON.stringify({ status, occurred_at: new Date(at).toISOString() }), { authorization: `Bearer ${key}` }); // prettier-ignore
  const ofd = { status: 'out_for_delivery', datetime: new Date(Date.now() - 2 * HOUR).toISOString() };
  const delivered = { status: 'delivered', datetime: new Date(Date.now() - HOUR).toISOString() };

  // Primed, not measured: the events side in transit, the feed side with its 19 scans.
  // Primed until each answered 2xx (a provider retries too).
  for (const [list, send] of [
    [events, (d: (typeof events)[number]) => postEvent(d.id, 'in_transit', dispatchDate + HOUR)],
    [feeds, (d: (typeof feeds)[number]) => postFeed(bodyOf(d.tracking, []))],
  ] as const) {
    // prettier-ignore
    let left = list;
    while (left.length) {
      const answers = await paced(left.map((d) => () => send(d)));
      left = left.filter((_, i) => answers[i].status >= 300 || answers[i].status === 0);
    }
  }
  await arrivals.settle(() => [...events, ...feeds].every((d) => arrivals.has(d.id, 'status.updated', 'in_transit')), 300_000, 2000);
  log('primed: every card in transit');

  await withClient(postgres.statsUrl, async (stats) => {
    const measure = async (name: string, sends: Array<() => Promise<Response>>, done: () => boolean, expect: number): Promise<Phase> => {
      await sleep(2000);
      await resetStatements(stats);
      const cpuBefore = treeCpuSeconds(roots);
      const statuses = await paced(sends);
      const bad = statuses.filter((s) => s.status !== expect);
      // Reported, not thrown: a provider retries what is not 2xx; the report says how many and why.
      if (bad.length) failures.push(`${name}: ${bad.length} of ${sends.length} not answered ${expect}: ${bad.slice(0, 3).map((b) => `${b.status} ${b.text.slice(0, 200)}`).join(' | ')}`); // prettier-ignore
      if (!(await arrivals.settle(done, 300_000, 1500))) failures.push(`${name}: not every webhook arrived`);
      await sleep(1500);
      const cpuAfter = treeCpuSeconds(roots);
      const { rows } = await readStatements(stats, postgres.database);
      const per = (rows2: StatementRow[]) => round(rows2.reduce((t, r) => t + r.calls, 0) / sends.length);
      const cpuMs = Object.fromEntries(Object.keys(roots).map((p) => [p, round(((cpuAfter[p] - cpuBefore[p]) * 1000) / sends.length, 1)]));
      log(`${name}: ${per(rows.filter((r) => !r.utility))} statements per request`);
      return {
        name,
        requests: sends.length,
        statements: per(rows.filter((r) => !r.utility)),
        statementsAll: per(rows),
        cpuMs,
        top: rows.slice(0, 12),
      };
    };
    const historyLength = async (ids: string[]) => {
      let total = 0;
      for (const id of ids) total += (await temporal.workflow.getHandle(id).fetchHistory()).events?.length ?? 0;
      return total;
    };

    // 1. One new change per request: out_for_delivery.
    const oneEvent = await measure('POST …/events, one change', events.map((d) => () => postEvent(d.id, 'out_for_delivery', Date.parse(ofd.datetime))), () => events.every((d) => arrivals.has(d.id, 'status.updated', 'out_for_delivery')), 202); // prettier-ignore
    const oneFeed = await measure('inbound, 20 checkpoints, one new', feeds.map((d) => () => postFeed(bodyOf(d.tracking, [ofd]))), () => feeds.every((d) => arrivals.has(d.id, 'status.updated', 'out_for_delivery')), 200); // prettier-ignore
    // 2. The same bodies again once every effect is recorded: all seen.
    const sample = feeds.slice(0, 20).map((d) => d.id);
    const historyBefore = await historyLength(sample);
    const allSeen = await measure('inbound, 20 checkpoints, all seen', feeds.map((d) => () => postFeed(bodyOf(d.tracking, [ofd]))), () => true, 200); // prettier-ignore
    const temporalEvents = (await historyLength(sample)) - historyBefore;

    // 3. Latency at LATENCY_RATE: delivered, side by side (events first, then the feed's 20-checkpoint bodies, one new).
    const timed = async (sends: Array<() => Promise<Response>>) => {
      const times: number[] = [];
      let failed = 0;
      const pending: Array<Promise<void>> = [];
      await steadyRate(LATENCY_RATE, sends.length, (i) => {
        const started = performance.now();
        pending.push(sends[i]().then(async (r) => { await r.arrayBuffer(); times.push(performance.now() - started); if (r.status >= 300) failed += 1; }, () => { failed += 1; })); // prettier-ignore
      });
      await Promise.all(pending);
      return { p50: round(percentile(times, 0.5), 1), p99: round(percentile(times, 0.99), 1), max: round(Math.max(...times), 1), failed };
    };
    const latencyEvents = await timed(events.map((d) => () => postEvent(d.id, 'delivered', Date.parse(delivered.datetime))));
    const latencyFeed = await timed(feeds.map((d) => () => postFeed(bodyOf(d.tracking, [ofd, delivered], 1))));
    await arrivals.settle(() => [...events, ...feeds].every((d) => arrivals.has(d.id, 'status.updated', 'delivered')), 300_000, 1500);

    const report = {
      date: new Date().toISOString(),
      commit: process.env.BENCH_COMMIT ?? '',
      settings: { N, RATE, LATENCY_RATE, CHECKPOINTS },
      machine: { nproc: os.cpus().length, loadBefore, loadAfter: os.loadavg().map((n) => round(n)) },
      phases: [oneEvent, oneFeed, allSeen],
      allSeenTemporalHistoryEvents: temporalEvents,
      failures,
      latency: { events: latencyEvents, feed: latencyFeed, ratio: round(latencyFeed.p99 / latencyEvents.p99) },
      goals: {
        allSeenStatements: { value: allSeen.statements, goal: '≤ 2', met: allSeen.statements <= 2 },
        allSeenTemporalCalls: { value: temporalEvents, goal: '0 history events', met: temporalEvents === 0 },
        oneNewExtraStatements: { value: round(oneFeed.statements - oneEvent.statements), goal: '≤ 2', met: oneFeed.statements - oneEvent.statements <= 2 }, // prettier-ignore
        p99Ratio: { value: round(latencyFeed.p99 / latencyEvents.p99), goal: '≤ 2', met: latencyFeed.p99 <= 2 * latencyEvents.p99 },
      },
    };
    const name = freeResultsName(RESULTS_DIR, report.date.slice(0, 10), process.env.BENCH_RESULTS_NAME);
    writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(RESULTS_DIR, `${name}.md`), toMarkdown(report));
    process.stdout.write(toMarkdown(report));
  });
}

/** Sends at RATE a second (open loop); the answers' statuses and bodies, in order (status 0: no answer). */
async function paced(sends: Array<() => Promise<Response>>): Promise<Array<{ status: number; text: string }>> {
  const answers: Array<Promise<{ status: number; text: string }>> = [];
  await steadyRate(
    RATE,
    sends.length,
    (i) =>
    answers.push(sends[i]().then(async (r) => ({ status: r.status, text: await r.text() }), (error: Error) => ({ status: 0, text: String(error.cause ?? error.message) }))), // prettier-ignore
  );
  return Promise.all(answers);
}

function toMarkdown(r: {
  date: string;
  settings: object;
  machine: object;
  phases: Phase[];
  allSeenTemporalHistoryEvents: number;
  failures: string[];
  latency: Record<string, unknown>;
  goals: Record<string, { value: number; goal: string; met: boolean }>;
}): string {
  // prettier-ignore
  const lines = [`# tracking-feeds benchmark, ${r.date}`, '', `settings ${JSON.stringify(r.settings)}, machine ${JSON.stringify(r.machine)}`, ''];
  lines.push(
    '| per request | statements (no utility) | all statements | CPU ms api / worker / temporal / postgres |',
    '| --- | ---: | ---: | --- |',
  );
  for (const p of r.phases) lines.push(`| ${p.name} | ${p.statements} | ${p.statementsAll} | ${Object.values(p.cpuMs).join(' / ')} |`);
  lines.push('', `All-seen bodies: ${r.allSeenTemporalHistoryEvents} new workflow history events over 20 sampled dispatches.`, '');
  lines.push(r.failures.length ? `Failures: ${r.failures.map((f) => `\n- ${f}`).join('')}` : 'Failures: none.', '');
  lines.push(
    `Latency at the rate (ms): ${JSON.stringify(r.latency)}`,
    '',
    '| goal | value | target | met |',
    '| --- | ---: | --- | :---: |',
  );
  for (const [name, g] of Object.entries(r.goals)) lines.push(`| ${name} | ${g.value} | ${g.goal} | ${g.met ? 'yes' : '**no**'} |`);
  for (const p of r.phases) {
    lines.push('', `Statements of "${p.name}" (calls per request):`, '');
    for (const row of p.top) lines.push(`- ${round(row.calls / p.requests)} × \`${row.query.slice(0, 140)}\``);
  }
  return `${lines.join('\n')}\n`;
}
