// `npm run bench:capacity`: issue 33's measurement, the previous main (a git worktree of
// BENCH_BASELINE_REF) and the new code (this checkout) side by side, alternating, each on fresh
// infrastructure: the API's and the worker's CPU per carrier event (Temporal's and Postgres's
// beside it), history events and bytes per life, registration's p99 register → queryable, and
// capacity as rising open-loop steps until p99 event → webhook exceeds 1 s. Cards spread over many
// postal codes. BENCH_PROFILE=1 also profiles the worker (`node --cpu-prof`) and summarises it.
// Results go to results/<name>.md and .json; README.md explains every figure and option.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { REPO_ROOT } from '../status-read/processes.js';
import { killTracked } from '../event-cost/infrastructure.js';
import { folderTree, worktreeOf, type VersionTree } from '../event-cost/versions.js';
import { profileTable } from './profile.js';
import { toMarkdown, type Report } from './report.js';
import { measureSide, settingsFromEnv, workDirs, type SideResult } from './side.js';
import { freeResultsName } from '../results-name.js';

const profileDir = process.env.BENCH_PROFILE === '1' ? mkdtempSync(path.join(os.tmpdir(), 'cds-bench-capacity-prof-')) : undefined;
const settings = settingsFromEnv({ lives: 10, steps: '10,20,25,30,35,40,45,50,60' }, profileDir);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const baselineRef = process.env.BENCH_BASELINE_REF ?? '36ee412';
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? path.join(REPO_ROOT, 'bench/capacity/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
const load = () => os.loadavg().map((n) => Math.round(n * 100) / 100);
const loadBefore = load();
delete process.env.DATABASE_URL;

const trees: VersionTree[] = [];
const removeAll = () => {
  trees.forEach((tree) => tree.remove());
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    log(`${signal}: stopping`);
    killTracked();
    removeAll();
    process.exit(130);
  });

let exitCode = 0;
try {
  const previous = worktreeOf(REPO_ROOT, baselineRef, 'previous main');
  trees.push(previous);
  const next = process.env.BENCH_NEW_REF
    ? worktreeOf(REPO_ROOT, process.env.BENCH_NEW_REF, 'new')
    : folderTree(path.resolve(process.env.BENCH_NEW_DIR ?? REPO_ROOT), REPO_ROOT, 'new');
  trees.push(next);
  log(`previous main ${previous.commit.slice(0, 7)}; new ${next.commit.slice(0, 7)} (${next.uncommittedFiles} uncommitted files)`);
  const cliPath = await resolveTemporalCli();
  const results: Report['rounds'] = [];
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? [previous, next] : [next, previous];
    const sides = new Map<VersionTree, SideResult>();
    for (const tree of order) {
      log(`round ${i + 1}: ${tree.label} after ${elapsed()} (load ${load().join(' ')})`);
      sides.set(tree, await measureSide(tree, settings, cliPath, log));
    }
    results.push({ previous: sides.get(previous)!, next: sides.get(next)!, order: order.map((t) => t.label).join(' → ') });
  }
  const report: Report = {
    date: new Date().toISOString().slice(0, 10),
    label: process.env.BENCH_LABEL ?? '',
    settings: { ...settings, profileDir: profileDir ? 'yes' : 'no', rounds, baselineRef },
    machine: {
      nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
      loadBefore,
      loadAfter: load(),
      wallTime: elapsed(),
    },
    rounds: results,
  };
  const name = freeResultsName(RESULTS_DIR, report.date, process.env.BENCH_RESULTS_NAME);
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  let markdown = toMarkdown(report);
  if (profileDir) {
    // Changes the worker handled over its whole life (start-up included): registrations and events.
    const changes = (s: SideResult) => s.registration.count + settings.dispatches + 3 * settings.lives + s.steps.reduce((n, st) => n + st.sent, 0); // prettier-ignore
    const of = (pick: (r: Report['rounds'][number]) => SideResult) => ({
      label: pick(results[0]).label,
      files: results.flatMap((r) => pick(r).profiles),
      events: results.reduce((n, r) => n + changes(pick(r)), 0),
    });
    markdown += `\n## Worker profile (µs of JavaScript per change: registration or carrier event)\n\n${profileTable([of((r) => r.previous), of((r) => r.next)]).join('\n')}\n`;
  }
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  process.stdout.write(`${markdown}\n`);
  log(`written ${path.relative(REPO_ROOT, RESULTS_DIR)}/${name}.md and .json after ${elapsed()}`);
  for (const side of results.flatMap((r) => [r.previous, r.next])) for (const f of side.failures) log(`FAILED ${side.label}: ${f}`);
  if (results.some((r) => r.previous.failures.length || r.next.failures.length)) exitCode = 1;
} catch (error) {
  log(`failed: ${(error as Error).stack ?? String(error)}`);
  exitCode = 1;
} finally {
  removeAll();
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
}
process.exit(exitCode);
