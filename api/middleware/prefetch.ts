// Latency, not logic: for GET /v1/status/{id} with a valid key, start reading the dispatch while the
// rate-limit write is in flight, instead of after it. The route still applies every check in order
// (401 → 429 → 400 → 404/403) and only then uses the row; a refused request's read is discarded.
import type { Middleware } from 'koa';
import { findDispatchRecord, type DispatchAccessRow } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import { UUID_V4 } from '../../domain/schemas.js';

const STATUS_PATH = /^\/v1\/status\/([^/]+)$/;

export interface PrefetchedDispatch {
  id: string;
  row: Promise<DispatchAccessRow | undefined>;
}

export function prefetchStatus(pool: Pool): Middleware {
  return async (ctx, next) => {
    const id = ctx.method === 'GET' && ctx.state.apiKey && ctx.query.locale === undefined ? STATUS_PATH.exec(ctx.path)?.[1] : undefined;
    if (id && UUID_V4.test(id)) {
      const row = findDispatchRecord(pool, id.toLowerCase());
      row.catch(() => undefined); // a refused request never awaits it
      ctx.state.prefetched = { id: id.toLowerCase(), row };
    }
    await next();
  };
}
