// GET /v1/dispatches (docs/http-contract.md): the caller's dispatches of its key's mode, newest first, a
// page at a time with an opaque cursor (keyset on created_at and id, db/dispatches.ts). Every
// parameter is validated; a bad or unknown one is a 400 that names it, before the key's scope (403),
// in the order of docs/http-contract.md "Common rules".
import type Router from '@koa/router';
import { decodeDispatchCursor, encodeDispatchCursor, listDispatches } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import { dispatchListQuery } from '../../domain/dispatch-schemas.js';
import { LIST_LIMIT_DEFAULT } from '../../domain/field-schemas.js';
import { badRequest, parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';

export function listRoutes(router: Router, pool: Pool): void {
  router.get('/v1/dispatches', async (ctx) => {
    const repeated = Object.entries(ctx.query).find(([, value]) => Array.isArray(value));
    if (repeated) throw badRequest(`${repeated[0]}: must be given once`);
    const query = parseOrBadRequest(dispatchListQuery, { ...ctx.query });
    const after = query.cursor === undefined ? undefined : decodeDispatchCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');
    const key = checkScope(ctx.state.apiKey, 'status:read');

    const page = await listDispatches(pool, {
      issuerId: key.issuerId,
      mode: key.mode,
      status: query.status,
      countryCode: query.country_code,
      createdAfter: query.created_after,
      createdBefore: query.created_before,
      limit: query.limit ?? LIST_LIMIT_DEFAULT,
      after,
    });
    ctx.body = { data: page.items.map((item) => item.record), next_cursor: page.next ? encodeDispatchCursor(page.next) : null };
  });
}
