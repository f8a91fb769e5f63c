// GET /v1/status/{id}: the status record, straight from the projection, sent as the stored
// JSON text (`?locale=` re-renders only `ui_suggestion`), with its ETag and Cache-Control; an
// `If-None-Match` naming the current tag gets 304 without a body, counted by the rate limit like any
// read. The read decision is api/status-read.ts, shared with the fast path (api/fast-status.ts),
// which answers successful plain reads (and their 304s) before Koa; this route answers the rest,
// every error included, after the Koa chain has authenticated and counted the request with the same
// functions. The path id and `?locale=` are checked (400) before the key's scope (403), in the order
// of docs/http-contract.md.
import type Router from '@koa/router';
import { z } from 'zod';
import type { Pool } from '../../db/pool.js';
import { localeTag } from '../../domain/field-schemas.js';
import { parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { loadStatus, STATUS_READ_SCOPE, statusAnswer, statusHeaders } from '../status-read.js';
import { dispatchIdParam, refuseErased } from './access.js';

export const statusQuery = z.object({ locale: localeTag.optional() });

/** `refreshIntervalMs`: PREDICTION_REFRESH_INTERVAL, for the Cache-Control max-age (api/status-read.ts `statusMaxAge`). */
export function statusRoutes(router: Router, pool: Pool, refreshIntervalMs: number): void {
  router.get('/v1/status/:id', async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const locale = parseLocale(ctx.query.locale);
    const key = checkScope(ctx.state.apiKey, STATUS_READ_SCOPE);
    const row = await loadStatus(pool, id, locale);
    if (!row) await refuseErased(pool, key, id);
    const answer = statusAnswer(key, id, row, locale, ctx.get('if-none-match') || undefined);
    ctx.set(statusHeaders({}, answer, refreshIntervalMs) as Record<string, string>);
    if (answer.body === undefined) ctx.status = 304;
    else ctx.body = answer.body;
  });
}

function parseLocale(value: string | string[] | undefined): string | undefined {
  // Other query parameters are ignored: clients may send more than the contract names.
  if (value === undefined) return undefined;
  return parseOrBadRequest(statusQuery, { locale: value }).locale;
}
