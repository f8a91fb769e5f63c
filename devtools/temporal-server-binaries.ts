// The production Temporal server's binaries and schema (docs/operations.md "The production
// engine"): `GOTOOLCHAIN=auto go install` of
// go.temporal.io/server/cmd/server and cmd/tools/sql v1.32.2 into <tool cache>/temporal-server/v1.32.2/bin,
// at the lowest CPU priority, once per machine (a file lock makes concurrent callers build once;
// about 5 minutes on 2 cores with cold Go caches), reused after; and the schema of its two databases
// set up on a Postgres with the sql tool, from the module's source in the Go module cache.
// devtools/temporal-server.ts runs the server as a cluster.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { isExecutable, MissingComponentError, onPath, toolCacheDir } from './tool-cache.js';

export const TEMPORAL_SERVER_VERSION = 'v1.32.2';
const MODULE = 'go.temporal.io/server';

export interface TemporalServerBinaries {
  server: string;
  sql: string;
  /** The module's source (schema/, config/) in the Go module cache. */
  moduleDir: string;
}

export interface PostgresEndpoint {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** The server and sql tool binaries, built once into the tool cache. */
export async function resolveTemporalServer(logger?: Logger): Promise<TemporalServerBinaries> {
  const dir = toolCacheDir('temporal-server', TEMPORAL_SERVER_VERSION);
  const bin = path.join(dir, 'bin');
  const server = path.join(bin, 'server');
  const sql = path.join(bin, 'sql');
  const go = onPath('go');
  const built = () => isExecutable(server) && isExecutable(sql);
  if (!built()) {
    if (!go)
      throw new MissingComponentError(
        `the Temporal server ${TEMPORAL_SERVER_VERSION} is built from source with Go (go install ${MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}): ` +
          'install Go 1.24+ (it fetches the toolchain the module asks for through the module proxy)',
      );
    logger?.info({ dir: bin }, `building the Temporal server ${TEMPORAL_SERVER_VERSION} with go install (about 5 minutes on 2 cores)`);
    await buildUnderLock(go, dir, bin, built);
    if (!built()) throw new MissingComponentError(`go install of the Temporal server did not produce ${server} and ${sql}`);
  }
  return { server, sql, moduleDir: await moduleSource(go) };
}

/**
 * One build at a time on the machine (flock on a file beside the binaries): a second caller waits,
 * then finds the binaries. Built into a temporary GOBIN and renamed into place, so a binary in bin/
 * is always whole.
 */
async function buildUnderLock(go: string, dir: string, bin: string, built: () => boolean): Promise<void> {
  mkdirSync(bin, { recursive: true });
  const gobin = mkdtempSync(path.join(dir, '.build-'));
  const script = [
    'set -e',
    `if [ -x "${bin}/server" ] && [ -x "${bin}/sql" ]; then exit 0; fi`,
    // At the lowest CPU priority: the other tests of the suite run beside this build.
    `${onPath('nice') ? 'nice -n 19 ' : ''}"${go}" install ${MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION} ${MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
    `mv "${gobin}/sql" "${bin}/sql"`,
    `mv "${gobin}/server" "${bin}/server"`,
  ].join('\n');
  const flock = onPath('flock');
  const [command, args] = flock ? [flock, [path.join(dir, 'build.lock'), 'sh', '-c', script]] : ['sh', ['-c', script]];
  try {
    const result = await exec(command, args, { env: { ...process.env, GOTOOLCHAIN: 'auto', GOBIN: gobin }, timeoutMs: 40 * 60_000 });
    if (result.code !== 0 && !built())
      throw new MissingComponentError(`go install of the Temporal server failed (exit ${result.code}):\n${result.output.slice(-3000)}`);
  } finally {
    rmSync(gobin, { recursive: true, force: true });
  }
}

async function moduleSource(go: string | undefined): Promise<string> {
  const env = { ...process.env, GOTOOLCHAIN: 'auto' };
  if (go) {
    const cache = spawnSync(go, ['env', 'GOMODCACHE'], { encoding: 'utf8', env }).stdout?.trim();
    const dir = cache && path.join(cache, MODULE, `server@${TEMPORAL_SERVER_VERSION}`);
    if (dir && existsSync(path.join(dir, 'schema'))) return dir;
    // Binaries cached, module source cleaned away: fetch the source alone (no build).
    const download = await exec(go, ['mod', 'download', '-json', `${MODULE}@${TEMPORAL_SERVER_VERSION}`], { env });
    const fetched = download.code === 0 ? (JSON.parse(download.stdout) as { Dir?: string }).Dir : undefined;
    if (fetched && existsSync(path.join(fetched, 'schema'))) return fetched;
  }
  throw new MissingComponentError(
    `the source of ${MODULE}@${TEMPORAL_SERVER_VERSION} (its schema/ and config/) is not in the Go module cache and Go cannot fetch it`,
  );
}

/** Creates both databases when missing and brings their schemas to this server's version. Safe to repeat. */
export async function setupTemporalDatabases(
  binaries: TemporalServerBinaries,
  postgres: PostgresEndpoint,
  databases = { main: 'temporal', visibility: 'temporal_visibility' },
): Promise<void> {
  const versioned = { main: 'temporal', visibility: 'visibility' } as const;
  for (const which of ['main', 'visibility'] as const) {
    const sql = (...args: string[]) =>
      exec(
        binaries.sql,
        [
          '--plugin',
          'postgres12',
          '--ep',
          postgres.host,
          '-p',
          String(postgres.port),
          '-u',
          postgres.user,
          '--db',
          databases[which],
          ...args,
        ],
        // The password through the environment, not the command line other users can read.
        { env: { ...process.env, SQL_PASSWORD: postgres.password } },
      );
    const created = await sql('create-database');
    if (created.code !== 0 && !/already exists/.test(created.output))
      throw new Error(`creating database ${databases[which]} failed:\n${created.output.slice(-2000)}`);
    for (const step of [
      ['setup-schema', '-v', '0.0'],
      ['update-schema', '-d', path.join(binaries.moduleDir, 'schema', 'postgresql', 'v12', versioned[which], 'versioned')],
    ]) {
      const result = await sql(...step);
      if (result.code !== 0) throw new Error(`sql ${step[0]} on ${databases[which]} failed:\n${result.output.slice(-2000)}`);
    }
  }
}

/** Runs a command to completion without blocking the event loop. */
export function exec(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => ((stdout += chunk), (output += chunk)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, output: `${output}${error.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, output });
    });
  });
}
