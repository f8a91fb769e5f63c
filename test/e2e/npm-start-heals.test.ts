// `npm start` supervises the parts it started: the embedded Postgres or the Temporal dev server
// killed under it with SIGKILL is started again (the launcher says so), on the same ports and data,
// and the API serves authenticated requests again, instead of answering 401 to strangers and
// failing everything else.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { alive, freeLauncherPorts, launcherEnv, nodeArgsFor, type Started, whenReady } from '../support/processes.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// As package.json's `start` runs it.
const START = nodeArgsFor('cli/start.ts');

let dataDir: string;
let api: string;
let key: string;
let launched: Started;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cds-heal-'));
  chmodSync(dataDir, 0o755);
  // Other processes on the machine may take a port picked as free before the launcher binds it:
  // such a start is tried again on fresh ports.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await launch();
    } catch (error) {
      if (attempt >= 3 || !/address already in use/.test(String(error))) throw error;
    }
  }
}, 540_000);

async function launch(): Promise<void> {
  const ports = await freeLauncherPorts();
  const env = launcherEnv(ports, dataDir);
  const child = spawn(process.execPath, START, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  launched = await whenReady(child, 'Press Ctrl-C to stop.', 'npm start');
  api = `http://127.0.0.1:${ports.api}`;
  key = /API key:\s+(cds_live_\w+)/.exec(launched.output())![1];
}

afterAll(async () => {
  if (launched?.child.exitCode === null) {
    launched.child.kill('SIGINT');
    await launched.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** A dispatch registered with the printed key (the API, Temporal, the worker and Postgres at work). */
async function register(): Promise<string | undefined> {
  try {
    const res = await fetch(`${api}/v1/dispatches`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ destination: { postal_code: '75011', country_code: 'FR' } }),
      signal: AbortSignal.timeout(15_000),
    });
    return res.status === 201 ? ((await res.json()) as { id: string }).id : undefined;
  } catch {
    return undefined;
  }
}

async function statusOf(id: string): Promise<number> {
  const res = await fetch(`${api}/v1/status/${id}`, { headers: { Authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(15_000) });
  return res.status;
}

function pidIn(file: string): number {
  return Number(readFileSync(file, 'utf8').split('\n')[0]);
}

describe('npm start heals a part killed under it', () => {
  it('restarts the embedded Postgres killed with SIGKILL; the key then registers and reads dispatches again', async () => {
    const before = await until(register, 'a registration before the kill');
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    const postmaster = pidIn(pidFile);
    process.kill(postmaster, 'SIGKILL');

    await until(() => launched.output().includes('embedded Postgres exited (signal SIGKILL); restarting'), 'the restart notice', 30_000);
    const after = await until(register, 'a registration after the restart', 120_000);
    expect(await statusOf(after)).toBe(200);
    expect(await statusOf(before)).toBe(200);
    expect(pidIn(pidFile)).not.toBe(postmaster);
    expect(launched.child.exitCode).toBeNull();
  }, 200_000);

  it('restarts the Temporal dev server killed with SIGKILL; the key then registers dispatches again', async () => {
    await until(register, 'a registration before the kill');
    const pidFile = path.join(dataDir, 'temporal.sqlite.pid');
    const server = pidIn(pidFile);
    process.kill(server, 'SIGKILL');

    await until(() => launched.output().includes('Temporal dev server exited (signal SIGKILL); restarting'), 'the restart notice', 30_000);
    const after = await until(register, 'a registration after the restart', 120_000);
    expect(await statusOf(after)).toBe(200);
    expect(launched.child.exitCode).toBeNull();
  }, 200_000);

  it('stops the restarted parts on Ctrl-C and exits 0', async () => {
    const postmaster = pidIn(path.join(dataDir, 'postgres', 'postmaster.pid'));
    const server = pidIn(path.join(dataDir, 'temporal.sqlite.pid'));
    launched.child.kill('SIGINT');
    expect(await launched.exited).toBe(0);
    // Gone, not merely signalled: a leaked part would still answer here 10 s later. (Under a full
    // suite's load the last reap can trail the launcher's own exit by a moment.)
    await until(() => !alive(postmaster), 'the restarted Postgres to be gone', 10_000);
    await until(() => !alive(server), 'the restarted dev server to be gone', 10_000);
  }, 60_000);
});
