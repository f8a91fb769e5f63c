// A second `npm start` on the data folder of one that is running (a second terminal, a supervisor
// started twice): it must not touch the first (before, it stopped the first's embedded Postgres as a
// "leftover" and each launcher's supervisor restarted its own, the two fighting for the folder), and
// it must say in one line what to do (docs/operations.md "Stopping npm start"). The first keeps
// serving; once it has stopped, the folder is free again.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freeLauncherPorts, launcherEnv, whenReady, type Started } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let dataDir: string;
let first: Started | undefined;

const npmStart = (env: NodeJS.ProcessEnv) => spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
const postmasterPid = () => Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

async function stop(started: Started): Promise<number | null> {
  process.kill(-started.child.pid!, 'SIGINT');
  return started.exited;
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cds-twice-'));
  chmodSync(dataDir, 0o755);
  first = await whenReady(npmStart(launcherEnv(await freeLauncherPorts(), dataDir)), 'Press Ctrl-C to stop.', 'the first npm start');
}, 180_000);

afterAll(async () => {
  if (first) await stop(first);
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('a second npm start on the folder of a running one', () => {
  it('exits 1 at once with one line naming the running one, and leaves it serving', async () => {
    const postgresBefore = postmasterPid();
    const ports = await freeLauncherPorts();
    const second = npmStart(launcherEnv(ports, dataDir));
    let stderr = '';
    second.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
    const lines = stderr.split('\n').filter((line) => line.startsWith('npm start:'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^npm start: could not start: another npm start \(pid \d+\) is running on \S*cds-twice-\S*: stop it first, or give this one its own CDS_DATA_DIR$/,
      ),
    ]);
    expect(stderr).not.toMatch(/\s+at\s/);
    // The first is untouched: the same postmaster, and its API answers.
    expect(postmasterPid()).toBe(postgresBefore);
    const runtime = JSON.parse(readFileSync(path.join(dataDir, 'runtime.json'), 'utf8')) as { apiUrl: string };
    expect((await fetch(`${runtime.apiUrl}/healthz`)).status).toBe(200);
    expect(first!.output()).not.toMatch(/restarting|exited/);
  }, 120_000);

  it('once the first has stopped, leaves no lock behind and the next start comes up', async () => {
    expect(await stop(first!)).toBe(0);
    first = undefined;
    expect(existsSync(path.join(dataDir, 'launcher.pid'))).toBe(false);
    first = await whenReady(npmStart(launcherEnv(await freeLauncherPorts(), dataDir)), 'Press Ctrl-C to stop.', 'the next npm start');
  }, 180_000);
});
