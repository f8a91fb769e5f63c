// `npm run bench:scale`: the service at scale (bench/scale/README.md), from outside, real components only:
// 10,000 dispatches through their whole life, the hourly refresh over 100,000 open dispatches, and
// registration latency and batches; on the Temporal dev server and/or a real Temporal server on
// Postgres (BENCH_TEMPORAL). Each engine gets a fresh set of processes (setup.ts). Results go to
// results/<date>-<engine>.json (the parts of this run replace the same parts of an earlier run of the
// day) and results/<date>.md, both engines side by side (report.ts). Options (env): README.md.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CountryPlan } from '../transit-statistics/history.js';
import { REPO_ROOT, WORKER_DEPLOY_ENV } from '../status-read/processes.js';
import { enginesFromEnv } from './engine.js';
import { lifecyclePart } from './lifecycle.js';
import { refreshPart } from './refresh.js';
import { registrationPart } from './registration.js';
import { toMarkdown, type EngineResults, type Load } from './report.js';
import { log, startStack } from './setup.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
// The refresh first: its seeded projections must be the only open dispatches predicted before its history existed.
const PARTS = ['refresh', 'registration', 'lifecycle'] as const;
type Part = (typeof PARTS)[number];
const parts = (process.env.BENCH_PARTS ?? PARTS.join(',')).split(',').map((p) => p.trim()) as Part[];
for (const part of parts) if (!PARTS.includes(part)) throw new Error(`BENCH_PARTS: unknown part ${part}`);

/** `DE:60000,ES:40000`: country and history rows; 90 postal prefixes × 20 codes each. */
function countryPlans(text: string): CountryPlan[] {
  return text.split(',').map((entry, n) => {
    const [countryCode, rows] = entry.split(':');
    return { countryCode, rows: Number(rows), prefixes: 90, codesPerPrefix: 20, median: 2 + (n % 3) };
  });
}

const settings = {
  lifecycle: {
    dispatches: env('BENCH_DISPATCHES', 10_000),
    batchSize: env('BENCH_BATCH_SIZE', 1000),
    inflight: env('BENCH_INFLIGHT', 64),
    historySample: env('BENCH_HISTORY_SAMPLE', 50),
  },
  refresh: {
    open: env('BENCH_REFRESH_OPEN', 100_000),
    registered: env('BENCH_REFRESH_REGISTERED', 2000),
    countries: countryPlans(process.env.BENCH_REFRESH_COUNTRIES ?? 'DE:60000,ES:40000,IT:40000,US:60000'),
    changedCountry: process.env.BENCH_REFRESH_CHANGED ?? 'ES',
    changeShare: env('BENCH_REFRESH_CHANGE_SHARE', 0.5),
    changeMedian: env('BENCH_REFRESH_CHANGE_MEDIAN', 7),
    batchSize: env('BENCH_BATCH_SIZE', 1000),
  },
  registration: {
    singles: env('BENCH_REGISTRATIONS', 2000),
    concurrency: env('BENCH_REGISTRATION_CONCURRENCY', 16),
    batches: env('BENCH_BATCHES', 3),
    batchSize: env('BENCH_BATCH_SIZE', 1000),
    historySample: env('BENCH_HISTORY_SAMPLE', 50),
  },
};
if (!settings.refresh.countries.some((c) => c.countryCode === settings.refresh.changedCountry)) {
  throw new Error(`BENCH_REFRESH_CHANGED (${settings.refresh.changedCountry}) must be one of BENCH_REFRESH_COUNTRIES`);
}

// BENCH_RESULTS_DIR: elsewhere (small trial runs), so that results/ holds only committed-size runs.
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? path.join(REPO_ROOT, 'bench/scale/results');
const date = new Date().toISOString().slice(0, 10);
mkdirSync(RESULTS_DIR, { recursive: true });

/** The load of the machine now: load averages and the busiest processes that are not this run's. */
function machineLoad(): Load {
  return { at: new Date().toISOString(), loadavg: readFileSync('/proc/loadavg', 'utf8').trim() };
}

let failed = false;
// BENCH_REPORT_ONLY=1: no run, results/<date>.md rendered again from the day's JSON files.
for (const kind of process.env.BENCH_REPORT_ONLY === '1' ? [] : enginesFromEnv()) {
  const file = path.join(RESULTS_DIR, `${date}-${kind}.json`);
  const previous: EngineResults | undefined = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as EngineResults) : undefined;
  const result: EngineResults = previous ?? { engine: kind, parts: {} };
  const started = Date.now();
  const loadBefore = machineLoad();
  log(`${kind}: starting (parts ${parts.join(', ')}; load ${loadBefore.loadavg})`);
  const stack = await startStack(kind);
  try {
    const runInfo = () => ({
      settings,
      loadBefore,
      loadAfter: machineLoad(),
      wallSeconds: Math.round((Date.now() - started) / 1000),
      environment: {
        node: process.version,
        cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
        postgres: stack.postgresVersion,
        temporal: stack.engine.description,
        // The worker inherits this process's environment: WORKER_* tuning set here applies to it.
        'worker tuning (env)':
          Object.entries(process.env)
            .filter(([name]) => name.startsWith('WORKER_'))
            .map(([name, value]) => `${name}=${value}`)
            .join(', ') || 'defaults (workflow cache 1000)',
        // The chart's worker.nodeOptions, or BENCH_WORKER_NODE_OPTIONS (bench/status-read/processes.ts).
        'worker NODE_OPTIONS': WORKER_DEPLOY_ENV.NODE_OPTIONS ?? '(none)',
      },
    });
    for (const part of parts) {
      const partStarted = Date.now();
      const partLoad = machineLoad();
      log(`${kind}: ${part} (load ${partLoad.loadavg})`);
      const figures =
        part === 'lifecycle'
          ? await lifecyclePart(stack, settings.lifecycle)
          : part === 'refresh'
            ? await refreshPart(stack, settings.refresh)
            : await registrationPart(stack, settings.registration);
      result.parts[part] = {
        ...runInfo(),
        loadBefore: partLoad,
        wallSeconds: Math.round((Date.now() - partStarted) / 1000),
        figures,
      } as never;
      if (part === 'lifecycle' && (figures as Awaited<ReturnType<typeof lifecyclePart>>).lost > 0) failed = true;
    }
  } finally {
    await stack.stop();
  }
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`${kind}: written ${path.relative(REPO_ROOT, file)} after ${Math.round((Date.now() - started) / 1000)} s`);
}

const engines = (['dev', 'production'] as const)
  .map((kind) => path.join(RESULTS_DIR, `${date}-${kind}.json`))
  .filter((file) => existsSync(file))
  .map((file) => JSON.parse(readFileSync(file, 'utf8')) as EngineResults);
const markdown = toMarkdown(date, engines);
writeFileSync(path.join(RESULTS_DIR, `${date}.md`), markdown);
process.stdout.write(markdown);
if (failed) process.exitCode = 1;
