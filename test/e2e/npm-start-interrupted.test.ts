// `npm start` interrupted during its start-up (docs/operations.md "Stopping npm start"): the real
// `npm start` in a process group of its own, on one data folder, stopped at each stage of its
// start-up (the very first initdb, the Temporal dev server coming up, the migrations, the demo
// issuer's creation) by Ctrl-C or SIGTERM, or killed there with SIGKILL: the launcher alone (the OOM
// killer) or every process of it at once (a power cut). Ctrl-C and SIGTERM must stop every part and
// leave no process, port or lock file, within seconds, exit 0 with one `npm start:` line and no stack
// trace. After a SIGKILL the next start must come up (each test starts where the one before stopped)
// and keep what an earlier complete start wrote: the demo issuer, its key and its dispatches.
//
// The moments: initdb and the dev server are seen as processes of this data folder (the environment
// of every part names it); the migrations and the demo issuer's creation are held where they wait
// for their advisory lock, which the test takes first on the launcher's own Postgres.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { exitedWithOutput, freeLauncherPorts, launcherEnv, type LauncherPorts, portOpen, whenReady } from '../support/processes.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// node-pg-migrate's advisory lock (db/migrate.ts waits for it) and the demo issuer's (cli/demo.ts).
const MIGRATION_LOCK = 'SELECT pg_advisory_lock(7241865325823964)';
const DEMO_LOCK = "SELECT pg_advisory_lock(hashtext('cds-demo-issuer'))";

let dataDir: string;
let ports: LauncherPorts;
let env: NodeJS.ProcessEnv;
let running: Launch | undefined;
let holder: pg.Client | undefined;
/** What the complete start wrote: its demo issuer, the key it printed, a dispatch registered with it. */
let complete: { issuerId: string; key: string; dispatchId: string } | undefined;

interface Launch {
  npm: number;
  output(): string;
  exited: Promise<number | null>;
}

/** `npm start` in its own process group (as a terminal runs it), with its output collected. */
function launch(): Launch {
  if (running) throw new Error('the launch of a test before is still running');
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let text = '';
  child.stdout.on('data', (chunk) => (text += chunk));
  child.stderr.on('data', (chunk) => (text += chunk));
  running = { npm: child.pid!, output: () => text, exited: exitedWithOutput(child) };
  return running;
}

/** Every process of this data folder: npm, the launcher and every child, whose environment names it. */
function parts(): Array<{ pid: number; command: string }> {
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`CDS_DATA_DIR=${dataDir}`)) continue;
      found.push({ pid, command: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

const partRunning = (name: string) => parts().find((part) => part.command.includes(name));
const launcher = () => partRunning('cli/start.ts');

/** Waits for `moment` while the launch runs; fails with its output if it ends first. */
async function whenAt(launched: Launch, moment: () => boolean | Promise<boolean>, what: string, timeoutMs = 90_000): Promise<void> {
  let ended = false;
  void launched.exited.then(() => (ended = true));
  await until(
    async () => {
      if (ended) throw new Error(`npm start ended before ${what}:\n${launched.output()}`);
      return await moment();
    },
    what,
    timeoutMs,
  );
}

/**
 * The port of the Postgres the running launcher started, once it is ready (postmaster.pid: line 1
 * its pid, line 4 its port, line 8 its status); not that of an orphan the launcher is about to stop.
 */
function postgresPort(): number | undefined {
  try {
    const lines = readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n');
    const parent = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${Number(lines[0])}/status`, 'utf8'))?.[1];
    return lines[7]?.trim() === 'ready' && Number(parent) === launcher()?.pid ? Number(lines[3]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes `lock` on the launcher's database from a session of the test's own, before the launcher
 * gets there, and returns once a session of the launcher waits for it: the launcher is held there.
 */
async function holdAt(launched: Launch, lock: string, what: string): Promise<void> {
  await whenAt(
    launched,
    async () => {
      if (!holder) {
        const port = postgresPort();
        if (!port) return false;
        const client = new pg.Client({ host: '127.0.0.1', port, user: 'cds', password: 'cds-local-only', database: 'card_delivery' });
        client.on('error', () => {}); // the launcher's stop ends this session
        try {
          await client.connect();
          await client.query(lock);
          holder = client;
        } catch {
          await client.end().catch(() => {});
          return false;
        }
      }
      try {
        const waiting = await holder.query(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND pid <> pg_backend_pid()",
        );
        return waiting.rowCount! > 0;
      } catch {
        await release(); // its Postgres went away (restarted): take the lock again on the new one
        return false;
      }
    },
    `the launcher to wait in ${what}, the test holding its lock`,
  );
}

async function release(): Promise<void> {
  await holder?.end().catch(() => {});
  holder = undefined;
}

const lockFiles = () =>
  [path.join(dataDir, 'postgres', 'postmaster.pid'), path.join(dataDir, 'temporal.sqlite.pid'), path.join(dataDir, 'runtime.json')].filter(
    (file) => existsSync(file),
  );

/**
 * npm exited 0 within 20 s of the signal, with one `npm start:` line and no stack trace; no process
 * of the data folder runs, no port is open, no lock file is left.
 */
async function expectStoppedCleanly(launched: Launch, signalledAt: number): Promise<void> {
  const code = await Promise.race([launched.exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 20_000))]);
  const output = launched.output();
  expect({ code, seconds: Math.round((Date.now() - signalledAt) / 1000) < 20 }).toEqual({ code: 0, seconds: true });
  running = undefined;
  await release();
  // The parts are stopped before the launcher exits; give their reaping a moment under load.
  await until(() => parts().length === 0, 'every part to be gone', 3_000).catch(() => {});
  expect(parts()).toEqual([]);
  for (const port of [ports.api, ports.temporal, ports.ui, ports.demoWebhook]) expect({ port, open: await portOpen(port) }).toEqual({ port, open: false }); // prettier-ignore
  expect(lockFiles()).toEqual([]);
  expect(output.split('\n').filter((line) => line.startsWith('npm start:'))).toEqual([expect.stringMatching(/^npm start: stopped \(SIG(INT|TERM)\) during start-up/)]); // prettier-ignore
  expect(output).not.toMatch(/\.(ts|js):\d+:\d+/);
}

/** SIGKILL to `pids`; returns once npm has exited. */
async function kill(launched: Launch, pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await launched.exited;
  running = undefined;
  await release();
}

/** A start that comes up: its output once it says it is ready. */
async function startReady(): Promise<{ npm: number; output: () => string; exited: Promise<number | null> }> {
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const started = await whenReady(child, 'Press Ctrl-C to stop.', 'npm start');
  running = { npm: child.pid!, output: started.output, exited: started.exited };
  return running;
}

async function request(method: string, url: string, key: string, body?: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${ports.api}${url}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cds-interrupted-'));
  chmodSync(dataDir, 0o755); // as root: the postgres user can reach it, so the cluster stays in it
  ports = await freeLauncherPorts();
  // info: the launcher says which stage it reached.
  env = { ...launcherEnv(ports, dataDir), LOG_LEVEL: 'info' };
});

/** A test that failed may leave its launch running: every process of this data folder killed. */
async function killLeftovers(): Promise<void> {
  await release();
  for (const part of parts()) {
    try {
      process.kill(part.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (running) await running.exited;
  running = undefined;
}

afterEach(async () => {
  if (running) await killLeftovers();
}, 30_000);

afterAll(async () => {
  await killLeftovers();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('npm start interrupted during its start-up', () => {
  it('Ctrl-C during the very first initdb stops it and leaves no process, port or lock file', async () => {
    const launched = launch();
    await whenAt(launched, () => Boolean(partRunning('initdb')), 'initdb to run');
    const at = Date.now();
    process.kill(-launched.npm, 'SIGINT');
    await expectStoppedCleanly(launched, at);
  }, 120_000);

  it('SIGKILL of every process during the first initdb (a power cut) leaves a half-initialised data folder', async () => {
    const launched = launch();
    const pgVersion = () => readdirSync(dataDir).some((entry) => existsSync(path.join(dataDir, entry, 'PG_VERSION')));
    await whenAt(launched, () => Boolean(partRunning('initdb')) && pgVersion(), 'initdb to have begun writing');
    await kill(
      launched,
      parts().map((part) => part.pid),
    );
    expect(pgVersion()).toBe(true);
  }, 120_000);

  it('SIGTERM to the launcher while the dev server comes up stops every part (the half-initialised folder was initialised again)', async () => {
    const launched = launch();
    await whenAt(
      launched,
      () => Boolean(partRunning('start-dev')) && !launched.output().includes('Temporal dev server started'),
      'the dev server to be starting',
    );
    expect(launched.output()).toContain('using Postgres');
    const at = Date.now();
    process.kill(launcher()!.pid, 'SIGTERM');
    await expectStoppedCleanly(launched, at);
  }, 120_000);

  it('SIGKILL of the launcher alone (the OOM killer) while the dev server comes up leaves its parts running', async () => {
    const launched = launch();
    await whenAt(
      launched,
      () => Boolean(partRunning('start-dev')) && !launched.output().includes('Temporal dev server started'),
      'the dev server to be starting',
    );
    await kill(launched, [launcher()!.pid]);
    // The orphans the next start has to deal with.
    expect(partRunning('start-dev')).toBeDefined();
  }, 120_000);

  it('SIGINT to the npm process during the migrations stops every part (the orphans of the start before were stopped)', async () => {
    const launched = launch();
    await holdAt(launched, MIGRATION_LOCK, 'the migrations');
    const at = Date.now();
    process.kill(launched.npm, 'SIGINT');
    await expectStoppedCleanly(launched, at);
  }, 120_000);

  it('SIGKILL of every process during the migrations', async () => {
    const launched = launch();
    await holdAt(launched, MIGRATION_LOCK, 'the migrations');
    await kill(
      launched,
      parts().map((part) => part.pid),
    );
  }, 120_000);

  it('the next start comes up, creates the demo issuer and prints its key, which works', async () => {
    const started = await startReady();
    const issuerId = /Demo issuer:\s+(iss_\w+)/.exec(started.output())![1];
    const key = /API key:\s+(cds_live_\w+)/.exec(started.output())![1];
    const res = await request('POST', '/v1/dispatches', key, { destination: { postal_code: '75011', country_code: 'FR' } });
    expect(res.status).toBe(201);
    complete = { issuerId, key, dispatchId: ((await res.json()) as { id: string }).id };
    process.kill(-started.npm, 'SIGINT');
    expect(await started.exited).toBe(0);
    running = undefined;
  }, 150_000);

  it("Ctrl-C during the demo issuer's creation stops every part", async () => {
    const launched = launch();
    await holdAt(launched, DEMO_LOCK, "the demo issuer's creation");
    const at = Date.now();
    process.kill(-launched.npm, 'SIGINT');
    await expectStoppedCleanly(launched, at);
  }, 120_000);

  it("SIGKILL of the launcher alone during the demo issuer's creation", async () => {
    const launched = launch();
    await holdAt(launched, DEMO_LOCK, "the demo issuer's creation");
    await kill(launched, [launcher()!.pid]);
  }, 120_000);

  it('the next start comes up with the same demo issuer; its key and its dispatch are still there', async () => {
    const started = await startReady();
    expect(started.output()).toMatch(new RegExp(`Demo issuer:\\s+${complete!.issuerId}`));
    expect(started.output()).not.toContain('API key:');
    expect((await request('GET', `/v1/status/${complete!.dispatchId}`, complete!.key)).status).toBe(200);
    const at = Date.now();
    process.kill(-started.npm, 'SIGINT');
    expect(await started.exited).toBe(0);
    running = undefined;
    expect(Date.now() - at).toBeLessThan(20_000);
    expect(parts()).toEqual([]);
  }, 150_000);
});
