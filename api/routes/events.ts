// POST /v1/dispatches/{id}/events: a carrier status event. The event is recorded in carrier_events
// first (its dedupe key makes a repeat a no-op there), then the dispatch workflow is signalled —
// always, even for a repeat, so that a crash between the insert and the signal loses nothing; the
// workflow dedupes too. The state machine itself lives in the workflow.
import type Router from '@koa/router';
import type { Client } from '@temporalio/client';
import { insertCarrierEvent, setCarrierEventEffect } from '../../db/carrier-events.js';
import { findDispatch } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import { carrierEventBody, type CarrierEventBody } from '../../domain/schemas.js';
import { dedupeKey } from '../../domain/state-machine.js';
import { parseOrBadRequest } from '../errors.js';
import { requireScope } from '../middleware/auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { signalCarrierEvent } from '../temporal.js';
import { checkAccess, dispatchIdParam } from './access.js';

export function eventRoutes(router: Router, deps: { pool: Pool; temporal: Client }): void {
  router.post('/v1/dispatches/:id/events', requireScope('events:write'), jsonBody(), async (ctx) => {
    const key = ctx.state.apiKey!;
    const id = dispatchIdParam(ctx.params.id);
    const event = parseOrBadRequest(carrierEventBody, ctx.request.body);
    checkAccess(key, id, await findDispatch(deps.pool, id));

    const { duplicate } = await acceptCarrierEvent(deps, id, event);
    ctx.status = 202;
    ctx.body = { accepted: true, duplicate };
  });
}

/** Logs the event, then signals the workflow; also the path of the test helpers' synthesized events. */
export async function acceptCarrierEvent(
  deps: { pool: Pool; temporal: Client },
  dispatchId: string,
  event: CarrierEventBody,
): Promise<{ duplicate: boolean; dedupeKey: string }> {
  const eventKey = dedupeKey(event);
  const inserted = await insertCarrierEvent(deps.pool, dispatchId, eventKey, event);
  const open = await signalCarrierEvent(deps.temporal, dispatchId, { ...event, dedupeKey: eventKey });
  // A closed workflow means a delivered dispatch past its retention: the event is kept, to no effect.
  if (!open) await setCarrierEventEffect(deps.pool, dispatchId, eventKey, 'after_delivery');
  return { duplicate: !inserted, dedupeKey: eventKey };
}
