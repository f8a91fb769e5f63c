// One side of the event-cost benchmark, set up from outside: a fresh embedded Postgres with
// pg_stat_statements (devtools/postgres.ts, restarted once with the library preloaded), the
// version's own migrations (its db/migrate-cli.ts), a fresh Temporal dev server started by the
// version's own devtools/temporal-dev-server.ts (its search attributes and dynamic config), the version's
// API and worker as `node --import tsx api/main.ts` / `worker/main.ts` processes, and its admin CLI
// (`npm run -s admin -- --json …`) for the issuer, key and webhook endpoint.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, startPostgres, type RunningPostgres } from '../../devtools/postgres.js';
import { sleep } from '../webhook-latency/load.js';

const run = promisify(execFile);

/** Postgres settings the cost is counted with (docs: README.md "What runs"). */
export const STATEMENT_SETTINGS = {
  shared_preload_libraries: 'pg_stat_statements',
  'pg_stat_statements.track': 'all',
  'pg_stat_statements.track_utility': 'on',
  'pg_stat_statements.max': '10000',
};

export interface StatsPostgres {
  pg: RunningPostgres;
  /** The service's database. */
  url: string;
  /** The same cluster's `postgres` database, where the driver reads pg_stat_*: its own statements and transactions never count. */
  statsUrl: string;
  database: string;
  postmasterPid: number;
}

/**
 * An embedded cluster with pg_stat_statements loaded: started once (kept) to set the library with
 * ALTER SYSTEM, stopped, and started again throwaway (fsync off, data removed at stop).
 */
export async function startStatsPostgres(dataDir: string): Promise<StatsPostgres> {
  const first = await startPostgres({ dataDir, persistent: true });
  if (first.source !== 'embedded') throw new Error('the event-cost benchmark needs the embedded Postgres: unset DATABASE_URL');
  try {
    await withClient(first.url, async (client) => {
      for (const [name, value] of Object.entries(STATEMENT_SETTINGS)) await client.query(`ALTER SYSTEM SET ${name} = '${value}'`);
    });
  } finally {
    await first.stop();
  }
  const second = await startPostgres({ dataDir, persistent: false });
  const url = new URL(second.url);
  const database = url.pathname.slice(1);
  url.pathname = '/postgres';
  const statsUrl = url.toString();
  try {
    await withClient(statsUrl, async (client) => {
      const { rows } = await client.query<{ libs: string }>('SELECT current_setting($1) AS libs', ['shared_preload_libraries']);
      if (!rows[0].libs.includes('pg_stat_statements')) throw new Error(`shared_preload_libraries is "${rows[0].libs}" after the restart`);
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    });
  } catch (error) {
    await second.stop();
    throw new Error(`pg_stat_statements is not available in the embedded Postgres: ${(error as Error).message}`, { cause: error });
  }
  return { pg: second, url: second.url, statsUrl, database, postmasterPid: second.pid! };
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'bench-event-cost' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

interface DevServerModule {
  startDevServer(options: {
    cliPath: string;
    port: number;
    dbFilename?: string;
  }): Promise<{ address: string; child: ChildProcess; stop(): Promise<void> }>;
}

/**
 * The version's dev server (devtools/temporal-dev-server.ts, temporal/dev-server.ts before the
 * development engines left the product tree): its search attributes and SERVER_DYNAMIC_CONFIG.
 */
export async function startVersionDevServer(versionDir: string, cliPath: string, dbFilename: string) {
  const file = ['devtools/temporal-dev-server.ts', 'temporal/dev-server.ts'].find((candidate) =>
    existsSync(path.join(versionDir, candidate)),
  )!;
  const module = (await import(pathToFileURL(path.join(versionDir, file)).href)) as DevServerModule;
  return module.startDevServer({ cliPath, port: await freePort(), dbFilename });
}

const started = new Set<ChildProcess>();
// Never outlive the benchmark, whatever way it ends short of SIGKILL (clean-up stops them gracefully first).
process.on('exit', () => killTracked());

/** SIGKILL to every tracked process still running. */
export function killTracked(): void {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Kills `child` when the benchmark exits, if it still runs then. */
export function track(child: ChildProcess): ChildProcess {
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

/** `node --import tsx <entry>` in the version's folder (this Node: node_modules/.bin's under npm run), output to `logFile`. */
export function startEntryPoint(versionDir: string, entry: string, env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  const fd = openSync(logFile, 'a');
  try {
    return track(
      spawn(process.execPath, ['--import', 'tsx', entry], { cwd: versionDir, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] }),
    );
  } finally {
    closeSync(fd);
  }
}

/** Waits until `url` answers 200; fails if `child` exits first or after `timeoutMs`. */
export async function waitReady(url: string, child: ChildProcess, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) during start-up`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not answer 200 on ${url} within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopProcess(child: ChildProcess | undefined, graceMs = 20_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** The version's admin CLI with `--json`: its one JSON document. */
export async function admin<T>(versionDir: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<T> {
  const { stdout } = await run('npm', ['run', '-s', 'admin', '--', '--json', ...args], {
    cwd: versionDir,
    env: { ...process.env, ...env },
    maxBuffer: 16 << 20,
  });
  return JSON.parse(stdout) as T;
}

/** Every webhook event type the version's admin CLI offers, read from `webhook add --help`. */
export async function webhookEventTypes(versionDir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const { stdout } = await run('npm', ['run', '-s', 'admin', '--', 'webhook', 'add', '--help'], {
    cwd: versionDir,
    env: { ...process.env, ...env },
  });
  const list = /event types \(([^)]*)\)/.exec(stdout.replace(/\s+/g, ' '))?.[1];
  const types = (list ?? '').split(/[,\s]+/).filter((type) => /^[a-z_]+\.[a-z_]+$/.test(type));
  if (!types.length) throw new Error(`could not read the event types from \`admin webhook add --help\`:\n${stdout}`);
  return types;
}

/** Runs the version's migrations (its db/migrate-cli.ts) on `databaseUrl`. */
export async function migrateVersion(versionDir: string, databaseUrl: string): Promise<void> {
  await run(process.execPath, ['--import', 'tsx', 'db/migrate-cli.ts'], {
    cwd: versionDir,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    maxBuffer: 16 << 20,
  });
}
