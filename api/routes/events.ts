// Step 1 of a carrier event's path (docs/architecture.md "The path of one carrier event"):
// POST /v1/dispatches/{id}/events, a carrier status event. The HTTP edge only: the body is parsed in
// the service's vocabulary or a carrier's (400 naming the field), the key's access to the dispatch
// checked (404/403), and the event handed to ingest/carrier-events.ts (step 2), which logs it and
// signals the workflow; its answer becomes 202, 400 (occurred_at out of bounds) or 409 (a dispatch
// whose workflow closed undelivered, docs/states.md "Closed dispatches").
import type Router from '@koa/router';
import type { VocabularyStatus } from '../../db/carrier-events.js';
import { mapVocabularyStatus } from '../../domain/carrier-vocabularies.js';
import { CARRIER_EVENT_VARIANTS, carrierEventVocabulary, type CarrierEventBody } from '../../domain/schemas.js';
import type { CarrierEventIngest } from '../../ingest/carrier-events.js';
import { acceptedOrThrow, badRequest, parseOrBadRequest } from '../errors.js';
import { requireScope } from '../middleware/auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { checkAccess, dispatchIdParam } from './access.js';

export function eventRoutes(router: Router, deps: { ingest: CarrierEventIngest }): void {
  router.post('/v1/dispatches/:id/events', requireScope('events:write'), jsonBody(), async (ctx) => {
    const key = ctx.state.apiKey!;
    const id = dispatchIdParam(ctx.params.id);
    const { event, original } = parseCarrierEvent(ctx.request.body);
    const dispatch = checkAccess(key, id, await deps.ingest.dispatchFacts(id));
    const { duplicate } = acceptedOrThrow(await deps.ingest.ingest(dispatch, { event, original }));
    ctx.status = 202;
    ctx.body = { accepted: true, duplicate };
  });
}

/** The body in the service's vocabulary, and the carrier's own status when it was sent in another (400 naming the field). */
function parseCarrierEvent(body: unknown): { event: CarrierEventBody; original?: VocabularyStatus } {
  const vocabulary = parseOrBadRequest(carrierEventVocabulary, body);
  if (vocabulary === 'service') {
    const { vocabulary: _service, ...event } = parseOrBadRequest(CARRIER_EVENT_VARIANTS.service, body);
    return { event };
  }
  const { vocabulary: _name, status, ...fields } = parseOrBadRequest(CARRIER_EVENT_VARIANTS[vocabulary], body);
  const mapping = mapVocabularyStatus(vocabulary, status);
  // The variant's schema takes only statuses that map; this guards the table and the schema agreeing.
  if (!mapping.ok) throw badRequest(`status: ${mapping.problem}`);
  const { status: mapped, reason } = mapping.mapped;
  return {
    event: { ...fields, status: mapped, reason: fields.reason ?? reason },
    original: { vocabulary, status },
  };
}
