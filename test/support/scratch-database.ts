// A Postgres database of a test file's own, on the tests' Postgres server (TEST_DATABASE_URL), for
// a test whose rows no other test file may read or change: a prediction refresh or a retention
// sweep reads every row of its database, and some tests need a database that is empty, unmigrated
// or set up unlike the shared one. Made and dropped here, so every such file does it the same way.
import { randomBytes } from 'node:crypto';
import { migrate } from '../../db/migrate.js';
import { createPool, type Pool } from '../../db/pool.js';
import { requireTestEnv } from './env.js';

export interface ScratchDatabaseOptions {
  /** Applies the service's migrations to it (default: left empty). */
  migrate?: boolean;
  /** Runs on the server before the migrations, e.g. `ALTER DATABASE <name> SET …`. */
  setup?: (admin: Pool, name: string) => Promise<unknown>;
  /** The server to make it on, as the URL of a database there (default: TEST_DATABASE_URL). */
  serverUrl?: string;
}

export interface ScratchDatabase {
  /** `<prefix>_<8 hex digits>`: test files and repeated runs never share one. */
  name: string;
  url: string;
  /** Drops it WITH (FORCE), cutting connections still open to it, and closes the admin pool. Once only, however often called. */
  drop(): Promise<void>;
}

// Lower case only: Postgres folds an unquoted name to lower case, so this is the name it stores.
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
const MAX_IDENTIFIER_LENGTH = 63;

export async function createScratchDatabase(prefix: string, options: ScratchDatabaseOptions = {}): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  // The name goes into DDL unquoted (no parameters there): refuse anything that is not a plain
  // identifier, and one Postgres would silently truncate.
  if (!IDENTIFIER.test(name) || name.length > MAX_IDENTIFIER_LENGTH)
    throw new Error(`scratch database: not a lower-case Postgres identifier of at most ${MAX_IDENTIFIER_LENGTH} characters: ${name}`);
  const serverUrl = options.serverUrl ?? requireTestEnv('TEST_DATABASE_URL');
  const admin = createPool(serverUrl, { max: 1, applicationName: `test-scratch-${prefix}` });
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  const database: ScratchDatabase = {
    name,
    url: url.toString(),
    drop: () =>
      (dropped ??= (async () => {
        try {
          await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await admin.end();
        }
      })()),
  };
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    await options.setup?.(admin, name);
    if (options.migrate) await migrate(database.url);
  } catch (error) {
    // The caller gets no handle to drop it with.
    await database.drop().catch(() => {});
    throw error;
  }
  return database;
}
