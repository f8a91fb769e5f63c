// One `npm start` per data folder. A second one on the same folder (another terminal, a supervisor
// started twice) would take the first's embedded Postgres for one left by a killed launcher and stop
// it, and the two supervisors would then fight over the folder. So the launcher holds
// `<data folder>/launcher.pid` while it runs: created exclusively before anything is started, removed
// when it stops. One left by a launcher that was killed (its pid gone, or reused by a process that is
// not a launcher) is taken over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { StartupError } from '../platform/config.js';

export const LAUNCHER_LOCK_FILE = 'launcher.pid';

/** Takes the folder's lock for this process; throws a StartupError naming the launcher that holds it. Returns its release. */
export function takeLauncherLock(dataDir: string): () => void {
  const file = path.join(dataDir, LAUNCHER_LOCK_FILE);
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(readText(file), 10);
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isLauncher(holder)) {
      throw new StartupError(
        `another npm start (pid ${holder}) is running on ${dataDir}: stop it first, or give this one its own CDS_DATA_DIR`,
      );
    }
    // Left by a launcher that is gone: take it over (removed, then created exclusively again).
    rmSync(file, { force: true });
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The process is alive and, where /proc says what it runs, it is a launcher (cli/start.ts). */
function isLauncher(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive, but another user's: not ours to judge, so it holds the folder.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('cli/start');
  } catch {
    return true; // no /proc (macOS): alive is all that is known
  }
}
