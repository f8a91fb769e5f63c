// GET /v1/status/{id}: the spec's status record, straight from the projection, sent as the stored
// JSON text (`?locale=` re-renders only `ui_suggestion`). The read decision is api/status-read.ts,
// shared with the fast path (api/fast-status.ts), which answers successful plain reads before Koa;
// this route answers the rest, every error included, after the Koa chain has authenticated and
// counted the request with the same functions. The path id and `?locale=` are checked (400) before
// the key's scope (403), in the order of docs/http-contract.md.
import type Router from '@koa/router';
import { z } from 'zod';
import type { Pool } from '../../db/pool.js';
import { localeTag } from '../../domain/schemas.js';
import { badRequest, describeZodError } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { loadStatus, STATUS_READ_SCOPE, statusBody, statusHeaders } from '../status-read.js';
import { dispatchIdParam } from './access.js';

export const statusQuery = z.object({ locale: localeTag.optional() });

export function statusRoutes(router: Router, pool: Pool): void {
  router.get('/v1/status/:id', async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const locale = parseLocale(ctx.query.locale);
    const key = checkScope(ctx.state.apiKey, STATUS_READ_SCOPE);
    const body = statusBody(key, id, await loadStatus(pool, id, locale), locale);
    ctx.set(statusHeaders({}, body) as Record<string, string>);
    ctx.body = body;
  });
}

function parseLocale(value: string | string[] | undefined): string | undefined {
  // Other query parameters are ignored: the spec says additional ones exist.
  if (value === undefined) return undefined;
  const parsed = statusQuery.safeParse({ locale: value });
  if (!parsed.success) throw badRequest(describeZodError(parsed.error));
  return parsed.data.locale;
}
