// A quick one-sided probe of the capacity benchmark (README.md "Probing one side"): measures only
// BENCH_NEW_DIR (this checkout by default), or BENCH_PROBE_REF, once, with the same settings as
// run.ts, and prints the side's JSON, the worker's profile table with BENCH_PROFILE=1. For trying a
// change in a few minutes before the side-by-side run; its figures are not a result.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { REPO_ROOT } from '../status-read/processes.js';
import { killTracked } from '../event-cost/infrastructure.js';
import { folderTree, worktreeOf } from '../event-cost/versions.js';
import { profileTable } from './profile.js';
import { measureSide, settingsFromEnv, workDirs } from './side.js';

// BENCH_PROFILE_DIR keeps the profiles there (for reading them in DevTools); else a temp folder, removed.
const keptProfiles = process.env.BENCH_PROFILE_DIR;
const profileDir = process.env.BENCH_PROFILE === '1' ? (keptProfiles ?? mkdtempSync(path.join(os.tmpdir(), 'cds-bench-capacity-prof-'))) : undefined; // prettier-ignore
const settings = settingsFromEnv({ lives: 2, steps: '' }, profileDir);
const log = (message: string) => process.stderr.write(`[probe] ${message}\n`);
delete process.env.DATABASE_URL;
const tree = process.env.BENCH_PROBE_REF
  ? worktreeOf(REPO_ROOT, process.env.BENCH_PROBE_REF, process.env.BENCH_PROBE_REF)
  : folderTree(path.resolve(process.env.BENCH_NEW_DIR ?? REPO_ROOT), REPO_ROOT, 'new');
const cleanUp = () => {
  tree.remove();
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
  if (profileDir && !keptProfiles) rmSync(profileDir, { recursive: true, force: true });
};
process.once('SIGINT', () => {
  killTracked();
  cleanUp();
  process.exit(130);
});
let exitCode = 0;
try {
  log(
    `load ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  const side = await measureSide(tree, settings, await resolveTemporalCli(), log);
  process.stdout.write(`${JSON.stringify({ ...side, profiles: undefined }, null, 2)}\n`);
  if (profileDir) {
    const changes = side.registration.count + settings.dispatches + 3 * settings.lives + side.steps.reduce((n, s) => n + s.sent, 0);
    process.stdout.write(`${profileTable([{ label: side.label, files: side.profiles, events: changes }]).join('\n')}\n`);
  }
  log(
    `load ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  if (side.failures.length) exitCode = 1;
} catch (error) {
  log(`failed: ${(error as Error).stack ?? String(error)}`);
  exitCode = 1;
} finally {
  cleanUp();
}
process.exit(exitCode);
