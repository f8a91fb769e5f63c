// Step 1 of a carrier event's path (docs/architecture.md "The path of one carrier event"):
// POST /v1/dispatches/{id}/events, a carrier status event. The HTTP edge only: the body is parsed in
// the service's vocabulary or a carrier's (400 naming the field), the key's access to the dispatch
// checked (404/403), and the event handed to ingest/carrier-events.ts (step 2), which logs it and
// signals the workflow; its answer becomes 202, 400 (occurred_at out of bounds) or 409 (a dispatch
// whose workflow closed undelivered, docs/states.md "Closed dispatches").
//
// Also GET /v1/dispatches/{id}/events (docs/carrier-events.md "GET /v1/dispatches/{id}/events"), the
// same resource read back: the dispatch's carrier events as the log holds them
// (db/carrier-events.ts), in arrival order, each with what the workflow did with it (`effect`), a
// page at a time with an opaque cursor. Access as on every route that names a dispatch
// (./access.ts): the other mode's or an unknown id → 404, another issuer's → 403. On both methods
// the path id and the query or body are checked (400) before the key's scope (403), and that before
// the access check, in the order of docs/http-contract.md "Common rules", as GET /v1/status/{id} does.
import type Router from '@koa/router';
import { decodeCarrierEventCursor, encodeCarrierEventCursor, pageCarrierEvents, type VocabularyStatus } from '../../db/carrier-events.js';
import { findDispatch } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import {
  CARRIER_EVENT_VARIANTS,
  carrierEventListQuery,
  carrierEventVocabulary,
  type CarrierEventBody,
} from '../../domain/carrier-event-schemas.js';
import { mapVocabularyStatus } from '../../domain/carrier-vocabularies.js';
import { LIST_LIMIT_DEFAULT } from '../../domain/field-schemas.js';
import type { DispatchStatus } from '../../domain/vocabulary.js';
import type { CarrierEventIngest } from '../../ingest/carrier-events.js';
import { acceptedOrThrow, badRequest, parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { checkAccessOrErased, dispatchIdParam } from './access.js';

export function carrierEventRoutes(router: Router, deps: { ingest: CarrierEventIngest; pool: Pool }): void {
  const { pool } = deps;
  router.post('/v1/dispatches/:id/events', jsonBody(), async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const { event, original } = parseCarrierEvent(ctx.request.body);
    const key = checkScope(ctx.state.apiKey, 'events:write');
    const dispatch = await checkAccessOrErased(pool, key, id, await deps.ingest.dispatchFacts(id));
    const { duplicate } = acceptedOrThrow(await deps.ingest.ingest(dispatch, { event, original }));
    ctx.status = 202;
    ctx.body = { accepted: true, duplicate };
  });

  router.get('/v1/dispatches/:id/events', async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const repeated = Object.entries(ctx.query).find(([, value]) => Array.isArray(value));
    if (repeated) throw badRequest(`${repeated[0]}: must be given once`);
    const query = parseOrBadRequest(carrierEventListQuery, { ...ctx.query });
    const after = query.cursor === undefined ? undefined : decodeCarrierEventCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');

    const key = checkScope(ctx.state.apiKey, 'status:read');
    await checkAccessOrErased(pool, key, id, await findDispatch(pool, id));

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

/** The body in the service's vocabulary, and the carrier's own status when it was sent in another (400 naming the field). */
function parseCarrierEvent(body: unknown): { event: CarrierEventBody; original?: VocabularyStatus } {
  const vocabulary = parseOrBadRequest(carrierEventVocabulary, body);
  if (vocabulary === 'service') {
    const { vocabulary: _service, ...event } = parseOrBadRequest(CARRIER_EVENT_VARIANTS.service, body);
    refuseReasonOutsideException(event.status, event.reason, event.status);
    return { event };
  }
  const { vocabulary: _name, status, ...fields } = parseOrBadRequest(CARRIER_EVENT_VARIANTS[vocabulary], body);
  const mapping = mapVocabularyStatus(vocabulary, status);
  // The variant's schema takes only statuses that map; this guards the table and the schema agreeing.
  if (!mapping.ok) throw badRequest(`status: ${mapping.problem}`);
  const { status: mapped, reason } = mapping.mapped;
  refuseReasonOutsideException(mapped, fields.reason, `${vocabulary} ${status}, which is ${mapped}`);
  return {
    event: { ...fields, status: mapped, reason: fields.reason ?? reason },
    original: { vocabulary, status },
  };
}

/**
 * A reason belongs to an exception (DESIGN §3, docs/carrier-events.md): on any other status it would
 * be kept but mean nothing, so it is refused rather than stored as sent.
 */
function refuseReasonOutsideException(status: DispatchStatus, reason: string | undefined, said: string): void {
  if (reason !== undefined && status !== 'exception') {
    throw badRequest(`reason: only an exception takes a reason; this event's status is ${said}`);
  }
}
