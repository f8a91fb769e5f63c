// The Temporal engine a scale run measures on (BENCH_TEMPORAL): the CLI's dev server on a SQLite
// file (WAL, synchronous=off; what `npm start` and the other benchmarks use), or a real Temporal
// server on Postgres (docs/operations.md "The production engine"): devtools/temporal-server.ts's cluster, one member, on an embedded
// Postgres of its own.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg_ from 'pg';
import { freePort, startPostgres } from '../../devtools/postgres.js';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { startTemporalCluster, TEMPORAL_SERVER_VERSION, type TemporalCluster } from '../../devtools/temporal-server.js';
import { startDevServer } from '../../devtools/temporal-dev-server.js';

export type EngineKind = 'dev' | 'production';

export interface Engine {
  kind: EngineKind;
  address: string;
  /** What it is, for the results' environment table. */
  description: string;
  /** The engine's own process (CPU and memory are read for it). */
  pid: number;
  /** The production engine's Postgres postmaster (CPU and memory of it and its backends). */
  postgresPid?: number;
  /** Bytes of the engine's store: the SQLite file (+ WAL) or the server's Postgres databases. */
  storeBytes(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/** The engines BENCH_TEMPORAL asks for, in order (dev first). */
export function enginesFromEnv(value = process.env.BENCH_TEMPORAL ?? 'dev'): EngineKind[] {
  if (value === 'both') return ['dev', 'production'];
  if (value === 'dev' || value === 'production') return [value];
  throw new Error(`BENCH_TEMPORAL must be dev, production or both, not ${value}`);
}

function fileBytes(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

export async function startEngine(kind: EngineKind, work: string): Promise<Engine> {
  if (kind === 'dev') return startDev(work);
  return startProduction(work);
}

async function startDev(work: string): Promise<Engine> {
  const cliPath = await resolveTemporalCli();
  const dbFilename = path.join(work, 'temporal.sqlite');
  const server = await startDevServer({ cliPath, port: await freePort(), dbFilename });
  return {
    kind: 'dev',
    address: server.address,
    description: `${execFileSync(cliPath, ['--version'], { encoding: 'utf8' }).trim()}, dev server, SQLite file (WAL, synchronous=off)`,
    pid: server.child.pid!,
    storeBytes: async () => ({ 'SQLite file + WAL': fileBytes(dbFilename) + fileBytes(`${dbFilename}-wal`) }),
    stop: () => server.stop(),
  };
}

async function startProduction(work: string): Promise<Engine> {
  // Its own embedded Postgres (as a deployment gives Temporal a database server of its own), one
  // member with all four roles, the module's defaults otherwise.
  const dataDir = path.join(work, 'temporal-pg');
  const pg = await startPostgres({ dataDir, persistent: false, database: 'temporal_admin' });
  const url = new URL(pg.url);
  const postgres = { host: url.hostname, port: Number(url.port), user: url.username, password: decodeURIComponent(url.password) };
  const databases = { main: 'temporal', visibility: 'temporal_visibility' };
  let cluster: TemporalCluster;
  try {
    cluster = await startTemporalCluster({ postgres, members: 1, dataDir: path.join(work, 'temporal-server'), databases });
  } catch (error) {
    await pg.stop();
    throw error;
  }
  const postmasterPid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    kind: 'production',
    address: cluster.address,
    description: `Temporal server ${TEMPORAL_SERVER_VERSION} (devtools/temporal-server.ts, 1 member, 4 history shards), its own embedded Postgres (fsync off)`,
    pid: cluster.members[0].pid,
    postgresPid: postmasterPid,
    storeBytes: async () => {
      const client = new pg_.Client({ ...postgres, database: databases.main });
      await client.connect();
      try {
        const { rows } = await client.query<{ datname: string; bytes: string }>(
          'SELECT datname, pg_database_size(datname)::text AS bytes FROM pg_database WHERE datname = ANY ($1)',
          [[databases.main, databases.visibility]],
        );
        return Object.fromEntries(rows.map((r) => [`Postgres ${r.datname}`, Number(r.bytes)]));
      } finally {
        await client.end();
      }
    },
    stop: async () => {
      await cluster.stop();
      await pg.stop();
    },
  };
}
