// Stopping `npm start` (docs/operations.md "Stopping npm start"): the real `npm start` in a process
// group of its own, as a terminal runs it, stopped each way an operator or a supervisor stops it:
// Ctrl-C (SIGINT to the whole group), SIGTERM to the launcher alone, and SIGINT or SIGTERM to the
// npm process alone (a supervisor that knows only npm's pid). Each way must stop every part (the
// launcher with its API, worker and demo receiver, the embedded Postgres, the Temporal dev server),
// leave no process, port or lock file behind (postmaster.pid, temporal.sqlite.pid, runtime.json,
// launcher.pid),
// and let the next `npm start` on the same data and ports come up at once: each test starts where
// the one before stopped, and the last starts once more.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { alive, freeLauncherPorts, launcherEnv, type LauncherPorts, portOpen, type Started, whenReady } from '../support/processes.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let dataDir: string;
let ports: LauncherPorts;
let env: NodeJS.ProcessEnv;
let running: Started | undefined;

interface Parts {
  npm: number;
  launcher: number;
  postgres: number;
  devServer: number;
}

const lockFiles = () => [
  path.join(dataDir, 'postgres', 'postmaster.pid'),
  path.join(dataDir, 'temporal.sqlite.pid'),
  path.join(dataDir, 'runtime.json'),
  path.join(dataDir, 'launcher.pid'),
];

/** `npm start` in its own process group, once it says it is ready; the pids of its parts. */
async function start(): Promise<Parts> {
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running = await whenReady(child, 'Press Ctrl-C to stop.', 'npm start');
  const firstLine = (file: string) => Number(readFileSync(file, 'utf8').split('\n')[0]);
  return {
    npm: child.pid!,
    launcher: (JSON.parse(readFileSync(path.join(dataDir, 'runtime.json'), 'utf8')) as { pid: number }).pid,
    postgres: firstLine(path.join(dataDir, 'postgres', 'postmaster.pid')),
    devServer: firstLine(path.join(dataDir, 'temporal.sqlite.pid')),
  };
}

/** npm exited within 60 s, every part is gone, every port closed and no lock file is left. */
async function expectAllStopped(parts: Parts): Promise<void> {
  const exited = await Promise.race([running!.exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 60_000))]);
  expect({ npmExited: exited }).toEqual({ npmExited: true });
  running = undefined;
  // The parts a stopped npm leaves behind would still run a moment later; give a clean stop 10 s.
  await until(() => Object.values(parts).every((pid) => !alive(pid)), 'every part to exit', 10_000).catch(() => {});
  expect(Object.fromEntries(Object.entries(parts).map(([part, pid]) => [part, alive(pid)]))).toEqual({
    npm: false,
    launcher: false,
    postgres: false,
    devServer: false,
  });
  for (const port of [ports.api, ports.temporal, ports.ui, ports.demoWebhook]) expect({ port, open: await portOpen(port) }).toEqual({ port, open: false }); // prettier-ignore
  expect(lockFiles().filter((file) => existsSync(file))).toEqual([]);
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cds-signals-'));
  chmodSync(dataDir, 0o755);
  ports = await freeLauncherPorts();
  env = launcherEnv(ports, dataDir);
});

afterAll(async () => {
  // A test that failed may leave its npm start running: stop its whole group.
  if (running) {
    try {
      process.kill(-running.child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    await running.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('stopping npm start', () => {
  it('Ctrl-C (SIGINT to the process group) stops every part and leaves no process, port or lock file', async () => {
    const parts = await start();
    process.kill(-parts.npm, 'SIGINT');
    await expectAllStopped(parts);
  }, 180_000);

  it('SIGTERM to the launcher alone stops every part, and the start before it left nothing in its way', async () => {
    const parts = await start();
    process.kill(parts.launcher, 'SIGTERM');
    await expectAllStopped(parts);
  }, 180_000);

  it('SIGINT to the npm process alone stops every part', async () => {
    const parts = await start();
    process.kill(parts.npm, 'SIGINT');
    await expectAllStopped(parts);
  }, 180_000);

  it('SIGTERM to the npm process alone stops every part, and the next start comes up at once', async () => {
    const parts = await start();
    process.kill(parts.npm, 'SIGTERM');
    await expectAllStopped(parts);
    const again = await start();
    expect(running!.output()).toContain(`API:          http://localhost:${ports.api}/v1`);
    process.kill(-again.npm, 'SIGINT');
    await expectAllStopped(again);
  }, 240_000);
});
