// Step 1 of a carrier event's path (HTTP → workflow → projection → webhook; step 2 is
// workflows/dispatch.ts).
// POST /v1/dispatches/{id}/events: a carrier status event. The event is recorded in carrier_events
// first (its dedupe key makes a repeat a no-op there), then the dispatch workflow is signalled —
// always, even for a repeat, so that a crash between the insert and the signal loses nothing; the
// workflow dedupes too. The state machine itself lives in the workflow.
//
// docs/http-contract.md "Input bounds" and docs/states.md "Closed dispatches": an occurred_at outside [dispatch_date − 7 days, now + 15 minutes] is refused with 400
// before anything is recorded; an event for a dispatch whose workflow has closed undelivered
// (terminated by an operator, failed) is kept with effect `workflow_closed` and answered 409.
import type Router from '@koa/router';
import type { Client } from '@temporalio/client';
import { insertCarrierEvent, setCarrierEventEffect, type VocabularyStatus } from '../../db/carrier-events.js';
import { findDispatch } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import { occurredAtProblem } from '../../domain/input-bounds.js';
import { mapVocabularyStatus } from '../../domain/carrier-vocabularies.js';
import { CARRIER_EVENT_VARIANTS, carrierEventVocabulary, toUtc, type CarrierEventBody } from '../../domain/schemas.js';
import { dedupeKey } from '../../domain/state-machine.js';
import { badRequest, conflict, parseOrBadRequest } from '../errors.js';
import { requireScope } from '../middleware/auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { signalCarrierEvent } from '../../temporal/client.js';
import { checkAccess, dispatchIdParam } from './access.js';

export function eventRoutes(router: Router, deps: { pool: Pool; temporal: Client }): void {
  router.post('/v1/dispatches/:id/events', requireScope('events:write'), jsonBody(), async (ctx) => {
    const key = ctx.state.apiKey!;
    const id = dispatchIdParam(ctx.params.id);
    const { event, original } = parseCarrierEvent(ctx.request.body);
    const dispatch = checkAccess(key, id, await findDispatch(deps.pool, id));
    checkEventTime(event, dispatch.dispatchDate);

    const { duplicate } = await acceptCarrierEvent(deps, id, event, original);
    ctx.status = 202;
    ctx.body = { accepted: true, duplicate };
  });
}

/** The body in the service's vocabulary, and the carrier's own status when it was sent in another (400 naming the field). */
export function parseCarrierEvent(body: unknown): { event: CarrierEventBody; original?: VocabularyStatus } {
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

/** 400 naming occurred_at when it lies outside the time bounds of the dispatch (docs/http-contract.md "Input bounds"). */
export function checkEventTime(event: CarrierEventBody, dispatchDate: Date, now = new Date()): void {
  const outOfBounds = occurredAtProblem(event.occurred_at, dispatchDate, now);
  if (outOfBounds) throw badRequest(`occurred_at: ${outOfBounds}`);
}

/**
 * Logs the event, then signals the workflow; also the path of the test helpers' synthesized events.
 * The event must be within its time bounds (`checkEventTime`). Throws 409 when the dispatch's
 * workflow has closed without the card being delivered.
 */
export async function acceptCarrierEvent(
  deps: { pool: Pool; temporal: Client },
  dispatchId: string,
  received: CarrierEventBody,
  original?: VocabularyStatus,
): Promise<{ duplicate: boolean; dedupeKey: string }> {
  // In UTC from here on: Postgres takes no offset beyond ±15:59, RFC 3339 allows ±23:59.
  const event = { ...received, occurred_at: toUtc(received.occurred_at) };
  const eventKey = dedupeKey(event);
  const inserted = await insertCarrierEvent(deps.pool, dispatchId, eventKey, event, original);
  const open = await signalCarrierEvent(deps.temporal, dispatchId, { ...event, dedupeKey: eventKey });
  if (!open) {
    // The workflow has closed: after delivery (its retention is over) the event is kept to no effect;
    // otherwise (terminated by an operator, failed) nothing will ever act on it, and the caller is told.
    const delivered = (await findDispatch(deps.pool, dispatchId))?.status === 'delivered';
    await setCarrierEventEffect(deps.pool, dispatchId, eventKey, delivered ? 'after_delivery' : 'workflow_closed');
    if (!delivered) {
      throw conflict(
        `dispatch ${dispatchId} is closed and was not delivered (its workflow was terminated or failed): ` +
          'the event is recorded but changes nothing',
      );
    }
  }
  return { duplicate: !inserted, dedupeKey: eventKey };
}
