// Erasure on request (docs/http-contract.md "Erasure"): DELETE /v1/dispatches/{id}
// records the erasure and starts it (ingest/erasure.ts), answering 202 with the erasure object; a
// repeat answers the same erasure. GET /v1/erasures/{id} reads its progress, for the issuer that
// asked only (another issuer's or mode's erasure is not there: 404). The path id is checked (400)
// before the key's scope (403), then the dispatch's access (404/403), as GET /v1/status/{id} does.
import type Router from '@koa/router';
import type { Client } from '@temporalio/client';
import { findDispatchRecord } from '../../db/dispatches.js';
import { findErasure, findErasureOfDispatch, type Erasure } from '../../db/erasure-records.js';
import type { Pool } from '../../db/pool.js';
import { erasureId } from '../../domain/erasure-schemas.js';
import { eraseDispatch } from '../../ingest/erasure.js';
import type { Config } from '../../platform/config.js';
import { forbidden, notFound, parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { checkAccess, dispatchIdParam } from './access.js';

export function erasureRoutes(router: Router, deps: { pool: Pool; temporal: Client; config: Config }): void {
  const { pool } = deps;
  const ingestDeps = {
    pool,
    temporal: deps.temporal,
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    webhookTimeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
  };

  router.delete('/v1/dispatches/:id', async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const key = checkScope(ctx.state.apiKey, 'dispatches:write');
    // An erased dispatch (its projection gone) is known by its erasure alone.
    checkAccess(key, id, (await findDispatchRecord(pool, id)) ?? (await findErasureOfDispatch(pool, id)));
    const erasure = await eraseDispatch(ingestDeps, id);
    if (!erasure) throw notFound(`no dispatch ${id}`);
    ctx.status = 202;
    ctx.body = { id: erasure.id, dispatch_id: erasure.dispatchId, status: erasure.status, requested_at: erasure.requestedAt.toISOString() };
  });

  router.get('/v1/erasures/:erasure_id', async (ctx) => {
    const id = parseOrBadRequest(erasureId, ctx.params.erasure_id, 'erasure_id');
    const key = ctx.state.apiKey;
    if (!key?.scopes.includes('dispatches:write') && !key?.scopes.includes('status:read'))
      throw forbidden('this API key lacks the "status:read" or "dispatches:write" scope');
    const erasure = await findErasure(pool, id);
    if (!erasure || erasure.issuerId !== key.issuerId || erasure.mode !== key.mode)
      throw notFound(`no erasure ${id} for this key's issuer and mode`);
    ctx.body = erasureBody(erasure);
  });
}

function erasureBody(erasure: Erasure) {
  return {
    id: erasure.id,
    dispatch_id: erasure.dispatchId,
    status: erasure.status,
    requested_at: erasure.requestedAt.toISOString(),
    completed_at: erasure.completedAt?.toISOString() ?? null,
    removed: { rows: erasure.removed.rows, workflow_runs: erasure.removed.workflowRuns },
  };
}
