// GET /v1/dispatches/{id}/events (docs/http-contract.md "GET /v1/dispatches/{id}/events"): the
// dispatch's carrier events as the log holds them (db/carrier-events.ts), in arrival order, each with
// what the workflow did with it (`effect`), a page at a time with an opaque cursor. Access as on every
// route that names a dispatch (./access.ts): the other mode's or an unknown id → 404, another
// issuer's → 403, as the spec orders for cross-issuer lookups. The
// path id and the query are checked (400) before the key's scope (403), in the order of
// docs/http-contract.md "Common rules", as GET /v1/status/{id} does.
import type Router from '@koa/router';
import { decodeCarrierEventCursor, encodeCarrierEventCursor, pageCarrierEvents } from '../../db/carrier-events.js';
import { findDispatch } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import { carrierEventListQuery, LIST_LIMIT_DEFAULT } from '../../domain/schemas.js';
import { badRequest, parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { checkAccess, dispatchIdParam } from './access.js';

export function carrierEventRoutes(router: Router, pool: Pool): void {
  router.get('/v1/dispatches/:id/events', async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const repeated = Object.entries(ctx.query).find(([, value]) => Array.isArray(value));
    if (repeated) throw badRequest(`${repeated[0]}: must be given once`);
    const query = parseOrBadRequest(carrierEventListQuery, { ...ctx.query });
    const after = query.cursor === undefined ? undefined : decodeCarrierEventCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');

    const key = checkScope(ctx.state.apiKey, 'status:read');
    checkAccess(key, id, await findDispatch(pool, id));

    const page = await pageCarrierEvents(pool, id, { limit: query.limit ?? LIST_LIMIT_DEFAULT, after });
    ctx.body = {
      data: page.items.map((event) => ({
        id: event.id,
        status: event.status,
        occurred_at: event.occurredAt,
        received_at: event.receivedAt,
        reason: event.reason,
        location: event.location,
        event_id: event.eventId,
        effect: event.effect,
        original: event.original,
      })),
      next_cursor: page.next ? encodeCarrierEventCursor(page.next) : null,
    };
  });
}
