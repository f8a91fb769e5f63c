// Liveness and readiness for orchestrators, outside /v1: no key, no rate limit.
// /healthz: the process answers. /readyz: it can reach Postgres and is not draining: from SIGTERM on
// (api/main.ts) it answers 503 at once, so a load balancer stops sending new requests while the
// in-flight ones finish. Temporal unreachable (or without TEMPORAL_NAMESPACE) leaves the pod ready
// but `degraded`: status reads and lists need only Postgres, and writes answer 503
// service_unavailable themselves; a readiness that failed with Temporal would take every pod out of
// its load balancer at once and refuse the reads too. Each check sets cds_dependency_up, which the
// alerts read.
import Router from '@koa/router';
import type { Client } from '@temporalio/client';
import type { Pool } from '../../db/pool.js';
import { dependencyUp } from '../../platform/metrics.js';
import { serviceUnavailable } from '../errors.js';
import { checkTemporal } from '../../temporal/client.js';

const CHECK_TIMEOUT_MS = 2_000;

/** Whether the process is shutting down; api/main.ts sets `draining` on SIGTERM. */
export interface Readiness {
  draining: boolean;
}

export function healthRouter(deps: { pool: Pool; temporal: Client; readiness?: Readiness }): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    if (deps.readiness?.draining) throw serviceUnavailable('not ready: shutting down');
    const [database, temporal] = await Promise.all([
      databaseReachable(deps.pool),
      checkTemporal(deps.temporal, CHECK_TIMEOUT_MS).then((check) => check.ok),
    ]);
    dependencyUp.set({ dependency: 'database' }, database ? 1 : 0);
    dependencyUp.set({ dependency: 'temporal' }, temporal ? 1 : 0);
    if (!database) throw serviceUnavailable(`not ready: cannot reach the database${temporal ? '' : ' and temporal'}`);
    ctx.body = { status: temporal ? 'ready' : 'degraded', checks: { database, temporal } };
  });
  return router;
}

async function databaseReachable(pool: Pool): Promise<boolean> {
  try {
    await Promise.race([
      pool.query('SELECT 1'),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS).unref()),
    ]);
    return true;
  } catch {
    return false;
  }
}
