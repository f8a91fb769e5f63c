// POST /v1/dispatches: registers a dispatch by update-with-start of its workflow (DESIGN.md §3).
// Idempotent: the same id with the same body answers 200 with the current record; the same id with
// another body, or another issuer's id, is a 409 conflict. The projection answers repeats without
// touching Temporal; the workflow decides everything else, so concurrent registrations agree.
import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type { Client } from '@temporalio/client';
import type { Context } from 'koa';
import { findDispatch, type DispatchRow } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import { registrationBody, type Registration } from '../../domain/schemas.js';
import { normaliseTimestamp } from '../../domain/state-machine.js';
import type { Config } from '../../platform/config.js';
import type { DispatchRegistration } from '../../workflows/definitions.js';
import { conflict, parseOrBadRequest } from '../errors.js';
import { canonicalJson, registrationFingerprint } from '../fingerprint.js';
import type { ApiKey } from '../key-cache.js';
import { requireScope } from '../middleware/auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { registerDispatch } from '../temporal.js';

export function dispatchRoutes(router: Router, deps: { pool: Pool; temporal: Client; config: Config }): void {
  router.post('/v1/dispatches', requireScope('dispatches:write'), jsonBody(), async (ctx) => {
    const key = ctx.state.apiKey!;
    const body = parseOrBadRequest(registrationBody, ctx.request.body);
    const registration = toRegistration(body, key);

    const existing = await findDispatch(deps.pool, registration.id);
    if (existing) return answerRepeat(ctx, key, registration, existing);

    const result = await registerDispatch(deps.temporal, deps.config, registration);
    if (result.outcome === 'closed') {
      // The id belongs to a workflow that has completed: only its projection can still answer.
      const row = await findDispatch(deps.pool, registration.id);
      if (row) return answerRepeat(ctx, key, registration, row);
      throw conflict(`dispatch id ${registration.id} has already been used`);
    }
    if (result.outcome === 'conflict') throw conflict(result.reason);
    ctx.status = result.outcome === 'created' ? 201 : 200;
    if (result.outcome === 'created') ctx.set('Location', `/v1/status/${registration.id}`);
    ctx.body = result.record;
  });
}

function toRegistration(body: Registration, key: ApiKey): DispatchRegistration {
  return {
    id: body.id ?? randomUUID(),
    issuerId: key.issuerId,
    mode: key.mode,
    dispatchDate: body.dispatch_date ? normaliseTimestamp(body.dispatch_date) : new Date().toISOString(),
    destination: body.destination,
    locale: body.locale,
    carrier: body.carrier,
    trackingNumber: body.tracking_number,
    reference: body.reference,
    fingerprint: registrationFingerprint(body),
  };
}

function answerRepeat(ctx: Context, key: ApiKey, registration: DispatchRegistration, row: DispatchRow): void {
  // Another issuer's (or the other mode's) id is a conflict that says nothing about its owner.
  if (row.issuerId !== key.issuerId || row.mode !== key.mode) {
    throw conflict(`dispatch id ${registration.id} is already in use; omit "id" to have one assigned`);
  }
  const stored = typeof row.registration === 'string' ? row.registration : canonicalJson(row.registration);
  if (stored !== registration.fingerprint) {
    throw conflict(`dispatch ${registration.id} was already registered with a different body`);
  }
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = row.recordJson;
}
