// Tables: all, through db/migrations (and node-pg-migrate's pgmigrations).
// Applies the SQL migrations in db/migrations with node-pg-migrate. Safe to run from several
// processes at once (node-pg-migrate takes an advisory lock and waits for it).
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type { Logger } from 'pino';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

export async function migrate(databaseUrl: string, logger?: Logger): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    advisoryLockMode: 'wait',
    log: () => {},
    logger: {
      debug: () => {},
      info: (msg: string) => logger?.debug({ migration: msg }, 'migration'),
      warn: (msg: string) => logger?.warn(msg),
      // A connection that fails is the caller's to report (its one line, platform/dependency-errors.ts):
      // node-pg-migrate's own line for it is a driver dump.
      error: (msg: string) => {
        if (!msg.startsWith('could not connect to postgres')) logger?.error(msg);
      },
    },
  });
  const names = applied.map((m) => m.name);
  if (names.length > 0) logger?.info({ migrations: names }, 'database migrated');
  return names;
}
