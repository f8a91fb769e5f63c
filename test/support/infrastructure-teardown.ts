// Called by Jest's global teardown: stops what global-setup started and removes its scratch folder.
import { rmSync } from 'node:fs';
import type { RunningPostgres } from '../../devtools/postgres.js';
import type { RunningDevServer } from '../../devtools/temporal-dev-server.js';

export async function stopInfrastructure(): Promise<void> {
  const infra = (globalThis as Record<string, unknown>).__cdsInfra as
    { postgres: RunningPostgres; devServer: RunningDevServer; work: string } | undefined;
  if (!infra) return;
  await Promise.allSettled([infra.devServer.stop(), infra.postgres.stop()]);
  rmSync(infra.work, { recursive: true, force: true });
}
