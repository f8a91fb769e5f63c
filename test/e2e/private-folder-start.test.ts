// A new user's path as root inside a private folder (a clone in root's home, or in `mktemp -d`):
// the README's `npm install && npm start` in a fresh clone of the committed HEAD under a mode-700
// folder must serve the key it prints. As root the embedded Postgres runs as the `postgres` user,
// which cannot enter that folder: neither the binaries in node_modules nor the default
// `.data/postgres` are reachable to it, so `npm start` must place them where it can reach them.
//
// Only root runs Postgres as another user, so only root can show this: the test is skipped for
// anyone else (CI runs as root). It clones HEAD, so it tests what is committed, not the work tree.
// `npm install --prefer-offline` fills node_modules from the npm cache the parent checkout's install
// left behind: about 25 s on a 2-core machine, cheap enough to run the README's real command rather
// than linking the parent's node_modules (whose path would be reachable and hide the defect). The
// clone needs nothing beside it (no `../shared`): nothing at run time reads outside the project.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { relocatedClusterDir } from '../../devtools/postgres.js';
import { freeLauncherPorts, launcherEnv, whenReady, type Started } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const asRoot = process.getuid?.() === 0;

(asRoot ? describe : describe.skip)('npm start as root in a fresh clone under a mode-700 folder (skipped unless root)', () => {
  let work: string;
  let clone: string;
  let started: Started | undefined;

  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'cds-private-'));
    chmodSync(work, 0o700);
    clone = path.join(work, 'card-delivery-status-service');
    execFileSync('git', ['clone', '--quiet', ROOT, clone], { stdio: 'pipe' });
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: clone, stdio: 'pipe', timeout: 600_000 });
  }, 660_000);

  afterAll(async () => {
    if (started && started.child.exitCode === null) {
      process.kill(-started.child.pid!, 'SIGINT');
      await started.exited;
    }
    if (!clone) return;
    const cluster = relocatedClusterDir(path.join(clone, '.data', 'postgres'));
    rmSync(cluster, { recursive: true, force: true });
    rmSync(`${cluster}.path`, { force: true });
    rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it('serves the printed key: a dispatch registered with it reads back through GET /v1/status/{id}', async () => {
    expect(statSync(work).mode & 0o777).toBe(0o700);
    const ports = await freeLauncherPorts();
    // No CDS_DATA_DIR: the point is the default `.data` inside the private folder.
    const env = launcherEnv(ports);
    // Its own process group, as in a terminal: the Ctrl-C at the end reaches npm and the launcher.
    const child = spawn('npm', ['start'], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    started = await whenReady(child, 'Press Ctrl-C to stop.', 'npm start');

    const key = /API key:\s+(cds_live_\w+)/.exec(started.output())![1];
    const registered = await fetch(`http://127.0.0.1:${ports.api}/v1/dispatches`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ destination: { postal_code: '75011', country_code: 'FR' } }),
    });
    expect(registered.status).toBe(201);
    const { id } = (await registered.json()) as { id: string };
    const status = await fetch(`http://127.0.0.1:${ports.api}/v1/status/${id}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { status: string }).status).toBe('dispatched');
  }, 240_000);
});
