// `npm run bench:event-cost`: what one carrier event costs the service (SQL statements, transactions,
// CPU of API, worker, Temporal and Postgres, webhooks) and how many workflow history events a
// dispatch's whole life records, for the previous main (a git worktree of BENCH_BASELINE_REF) and
// the new code (this checkout) side by side in one run, each version on fresh infrastructure of its
// own and driven only from outside (side.ts). Results go to results/<date>.md and .json (README.md
// explains every figure). Options (env): see README.md.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { REPO_ROOT } from '../status-read/processes.js';
import { killTracked } from './infrastructure.js';
import { goals, toMarkdown, type Report } from './report.js';
import { measureSide, workDirs, type SideResult } from './side.js';
import { folderTree, worktreeOf, type VersionTree } from './versions.js';
import { freeResultsName } from '../results-name.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  dispatches: env('BENCH_DISPATCHES', 300),
  lives: env('BENCH_LIVES', 20),
  rate: env('BENCH_RATE', 10),
  registerConcurrency: env('BENCH_REGISTER_CONCURRENCY', 16),
  quietMs: env('BENCH_QUIET_MS', 1000),
  statsFlushMs: env('BENCH_STATS_FLUSH_MS', 11_000),
  timeoutS: env('BENCH_TIMEOUT_S', 120),
  rounds: env('BENCH_ROUNDS', 2),
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
};
const baselineRef = process.env.BENCH_BASELINE_REF ?? '36ee412';
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? path.join(REPO_ROOT, 'bench/event-cost/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
const loadBefore = os.loadavg().map((n) => Math.round(n * 100) / 100);

if (process.env.DATABASE_URL) {
  log('DATABASE_URL is ignored: each side gets a fresh embedded Postgres');
  delete process.env.DATABASE_URL;
}

const trees: VersionTree[] = [];
let cleaning: Promise<void> | undefined;
const removeTrees = () => (cleaning ??= Promise.resolve().then(() => trees.forEach((tree) => tree.remove())));
// Ctrl-C or a kill: exit at once, removing the worktrees and the side's folder. On exit the embedded
// Postgres and the dev server stop themselves (devtools/postgres.ts, devtools/temporal-dev-server.ts) and the
// API, worker and receiver are killed (infrastructure.ts `track`).
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    log(`${signal}: stopping`);
    killTracked();
    void removeTrees().finally(() => {
      for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  });

let exitCode = 0;
try {
  const previous = worktreeOf(REPO_ROOT, baselineRef, 'previous main');
  trees.push(previous);
  const next = process.env.BENCH_NEW_REF
    ? worktreeOf(REPO_ROOT, process.env.BENCH_NEW_REF, 'new')
    : folderTree(path.resolve(process.env.BENCH_NEW_DIR ?? REPO_ROOT), REPO_ROOT, 'new');
  trees.push(next);
  for (const tree of [previous, next])
    if (tree.lockFileDiffers)
      log(`${tree.label}: its package-lock.json differs from this checkout's; it runs on this checkout's node_modules`);
  log(`previous main ${previous.commit.slice(0, 7)} in ${previous.dir}; new ${next.commit.slice(0, 7)} in ${next.dir}`);
  const cliPath = await resolveTemporalCli();

  const rounds: Report['rounds'] = [];
  for (let i = 0; i < settings.rounds; i++) {
    // Alternate which side goes first, so that neither always runs on a warmer machine.
    const order = i % 2 === 0 ? [previous, next] : [next, previous];
    const results = new Map<VersionTree, SideResult>();
    for (const tree of order) {
      log(`round ${i + 1}: ${tree.label} after ${elapsed()}`);
      results.set(tree, await measureSide(tree, settings, cliPath, log));
    }
    rounds.push({ previous: results.get(previous)!, next: results.get(next)!, order: order.map((t) => t.label).join(' → ') });
  }

  const report: Report = {
    date: new Date().toISOString().slice(0, 10),
    label: process.env.BENCH_LABEL ?? '',
    settings: { ...settings, baselineRef, newSide: process.env.BENCH_NEW_REF ?? process.env.BENCH_NEW_DIR ?? 'this checkout' },
    machine: {
      nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
      cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
      loadBefore,
      loadAfter: os.loadavg().map((n) => Math.round(n * 100) / 100),
      wallTime: elapsed(),
    },
    node: process.version,
    goalStatements: process.env.BENCH_GOAL_STATEMENTS === 'all' ? 'statements' : 'statementsWithoutUtility',
    rounds,
  };
  const name = freeResultsName(RESULTS_DIR, report.date, process.env.BENCH_RESULTS_NAME);
  // The JSON first: a report that fails to render loses no figure.
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify({ ...report, goals: goals(report) }, null, 2)}\n`);
  const markdown = toMarkdown(report);
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  process.stdout.write(`${markdown}\n`);
  log(`written ${path.relative(REPO_ROOT, RESULTS_DIR)}/${name}.md and .json after ${elapsed()}`);
  const failures = rounds.flatMap((r) => [r.previous, r.next]).flatMap((s) => s.failures.map((f) => `${s.label}: ${f}`));
  for (const failure of failures) log(`FAILED ${failure}`);
  if (failures.length) exitCode = 1;
} catch (error) {
  log(`failed: ${(error as Error).stack ?? String(error)}`);
  exitCode = 1;
} finally {
  await removeTrees();
}
process.exit(exitCode);
