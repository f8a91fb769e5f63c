// The README promises `npm install && npm start` "in any folder": a fresh clone of the committed HEAD
// under a path with spaces, non-ASCII letters, quotes and shell metacharacters, `#` and `%`
// included, must start, serve the key it prints, keep every byte of its data inside its own `.data`
// and stop on Ctrl-C. The Temporal dev server opens its SQLite file through a `file:` URI: given
// the absolute path, a `#` cut it there (`…/Projekt #2/…` stored Temporal's history in a file
// `…/Projekt ` outside the clone) and `%xx` was decoded.
//
// `?` is left out: tsx (the TypeScript loader of `npm start` and every script) cannot load a file
// whose path holds one (README "Run it" says so). node_modules is a symlink to this checkout's,
// not an `npm install` (which takes over a minute here): the clone's own files, `.data` and the
// processes' working folders are all under the unusual path, which is what this test is about.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { relocatedClusterDir } from '../../devtools/postgres.js';
import { freeLauncherPorts, launcherEnv, whenReady, type Started } from '../support/processes.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const UNUSUAL = `my cards/Zoë's "copy" (#2) & co; $HOME 100%41`;

describe('npm start in a fresh clone under a folder with spaces, non-ASCII letters and shell metacharacters', () => {
  let work: string;
  let clone: string;
  let started: Started | undefined;

  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'cds-unusual-'));
    chmodSync(work, 0o755); // as root, the embedded Postgres runs as its own user: let it in
    mkdirSync(path.join(work, UNUSUAL), { recursive: true });
    clone = path.join(work, UNUSUAL, 'card-delivery');
    execFileSync('git', ['clone', '--quiet', ROOT, clone], { stdio: 'pipe' });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'));
  });

  afterAll(async () => {
    if (started && started.child.exitCode === null && started.child.signalCode === null) {
      process.kill(-started.child.pid!, 'SIGINT');
      await started.exited;
    }
    if (!clone) return;
    const cluster = relocatedClusterDir(path.join(clone, '.data', 'postgres'));
    rmSync(cluster, { recursive: true, force: true });
    rmSync(`${cluster}.path`, { force: true });
    rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it('serves the printed key, keeps its data in the clone’s .data and stops on Ctrl-C', async () => {
    const ports = await freeLauncherPorts();
    const env = launcherEnv(ports); // no CDS_DATA_DIR: the default `.data` under the unusual path
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

    // Temporal's history is in the clone, and nothing was written beside the folders on the way.
    expect(existsSync(path.join(clone, '.data', 'temporal.sqlite'))).toBe(true);
    expect(readdirSync(work)).toEqual(['my cards']);
    expect(readdirSync(path.join(work, 'my cards'))).toEqual([path.basename(path.dirname(clone))]);
    expect(readdirSync(path.dirname(clone))).toEqual(['card-delivery']);

    // Ctrl-C: npm ends by the signal as it always does; the launcher stops what it started.
    process.kill(-child.pid!, 'SIGINT');
    await started.exited;
    const groupGone = () => {
      try {
        process.kill(-child.pid!, 0);
        return false;
      } catch {
        return true;
      }
    };
    await until(groupGone, 'the launcher to exit after Ctrl-C');
    expect(existsSync(path.join(clone, '.data', 'temporal.sqlite.pid'))).toBe(false); // removed once the dev server exited
    expect(existsSync(path.join(clone, '.data', 'postgres', 'postmaster.pid'))).toBe(false); // a clean shutdown removes it
  }, 240_000);
});
