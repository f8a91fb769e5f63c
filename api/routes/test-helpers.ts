// POST /v1/test_helpers/dispatches/{id}/{action} (docs/http-contract.md "Test mode"): lets an issuer move a
// test-mode dispatch on without a carrier, as Stripe Issuing's and Increase's test helpers do, so
// that every webhook can be tried. Test keys only (a live key → 403, like a key without events:write,
// after the path and body are checked: 400 first, docs/http-contract.md "Common rules"); the dispatch is checked by the
// rule every dispatch route shares (access.ts: the other mode's id → 404, another issuer's → 403, an
// erased one → 404 saying so, as for a carrier event). The action
// becomes a carrier event, synthesized here with its own event id and sent down the very path a
// carrier's event takes (ingest/carrier-events.ts → the workflow's signal), so webhooks fire exactly as
// they would. The answer waits until the workflow has folded the event into the projection, and is
// the updated status record. An action the state machine would ignore (deliver twice, ship a card
// that is out for delivery) is a 409 conflict, not a silent no-op.
import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import { carrierEventEffect, earliestFreshEventTime } from '../../db/carrier-events.js';
import { findDispatch, findDispatchRecord } from '../../db/dispatches.js';
import type { CarrierEventIngest } from '../../ingest/carrier-events.js';
import type { Pool } from '../../db/pool.js';
import {
  testHelperAction,
  testHelperEmptyBody,
  testHelperFailBody,
  type CarrierEventBody,
  type TestHelperAction,
} from '../../domain/carrier-event-schemas.js';
import { applyCarrierEvent, stateShowing } from '../../domain/state-machine.js';
import type { DispatchStatus, EventEffect } from '../../domain/vocabulary.js';
import { latestOccurredAt } from '../../domain/input-bounds.js';
import { acceptedOrThrow, conflict, forbidden, parseOrBadRequest, serviceUnavailable } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import type { ApiKey } from '../key-cache.js';
import { optionalJsonBody } from '../middleware/json-body.js';
import { checkAccessOrErased, dispatchIdParam } from './access.js';

const STATUS_OF: Record<TestHelperAction, DispatchStatus> = {
  ship: 'in_transit',
  out_for_delivery: 'out_for_delivery',
  deliver: 'delivered',
  fail: 'exception',
  return: 'exception',
};

/** How long the answer may wait for the workflow to fold the event into the projection. */
const FOLD_DEADLINE_MS = 10_000;
const FOLD_POLL_MS = 20;

/** 403 unless the key has events:write and is a test key: after the request's checks (400), before the access check. */
function checkTestKey(key: ApiKey | undefined): ApiKey {
  const scoped = checkScope(key, 'events:write');
  if (scoped.mode !== 'test') throw forbidden('test helpers take a test-mode key (cds_test_…); this is a live key');
  return scoped;
}

export function testHelperRoutes(router: Router, deps: { pool: Pool; ingest: CarrierEventIngest }): void {
  router.post('/v1/test_helpers/dispatches/:id/:action', optionalJsonBody(), async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const action = parseOrBadRequest(testHelperAction, ctx.params.action, 'action');
    const reason = reasonFor(action, ctx.request.body);
    const key = checkTestKey(ctx.state.apiKey);
    const row = await checkAccessOrErased(deps.pool, key, id, await findDispatch(deps.pool, id));

    // Later than the event that set the current status (a forward scan leaves exception only when it
    // is later, docs/http-contract.md "Input bounds and integrity promises"), so that the event is never stale, and never past the latest
    // occurred_at a carrier event may carry (docs/http-contract.md "Input bounds and integrity promises").
    const now = new Date();
    const statusSince = (await earliestFreshEventTime(deps.pool, id)) ?? row.dispatchDate;
    const occurredAt = new Date(Math.min(Math.max(now.getTime(), statusSince.getTime() + 1), latestOccurredAt(now).getTime())).toISOString(); // prettier-ignore
    const event: CarrierEventBody = {
      status: STATUS_OF[action],
      occurred_at: occurredAt,
      event_id: `test_helper:${action}:${randomUUID()}`,
      reason,
    };
    // The current status as the set {one event that set it}: enough to tell whether this one changes it.
    const current = { status: row.status, statusSince: statusSince.toISOString(), exceptionReason: row.exceptionReason ?? undefined };
    refuseIneffective(action, row.status, applyCarrierEvent(stateShowing(current), event).effect);

    const { dedupeKey } = acceptedOrThrow(await deps.ingest.ingest(row, { event }, now));
    refuseIneffective(action, row.status, await folded(deps.pool, id, dedupeKey));
    ctx.type = 'application/json';
    ctx.body = (await findDispatchRecord(deps.pool, id))!.recordJson;
  });
}

function reasonFor(action: TestHelperAction, body: unknown): CarrierEventBody['reason'] {
  if (action === 'fail') return parseOrBadRequest(testHelperFailBody, body).reason;
  parseOrBadRequest(testHelperEmptyBody, body);
  return action === 'return' ? 'returned' : undefined;
}

function refuseIneffective(action: TestHelperAction, status: DispatchStatus, effect: EventEffect): void {
  if (effect !== 'applied' && effect !== 'exception_repeated') {
    throw conflict(`cannot ${action.replaceAll('_', ' ')} a dispatch that is ${status}: the event would change nothing (${effect})`);
  }
}

/** Waits until the workflow has recorded what the event did (written with the projection). */
async function folded(pool: Pool, dispatchId: string, dedupeKey: string): Promise<EventEffect> {
  const deadline = Date.now() + FOLD_DEADLINE_MS;
  for (;;) {
    const effect = await carrierEventEffect(pool, dispatchId, dedupeKey);
    if (effect) return effect;
    if (Date.now() > deadline) {
      throw serviceUnavailable(`the event was accepted but not yet applied; check GET /v1/status/${dispatchId} shortly`);
    }
    await new Promise((resolve) => setTimeout(resolve, FOLD_POLL_MS));
  }
}
