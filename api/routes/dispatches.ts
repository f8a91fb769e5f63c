// POST /v1/dispatches: registers one dispatch (docs/http-contract.md). 201 with Location when created, 200
// with the current record when the same body was already registered; the rules live in
// api/registration.ts, which the batch route (api/routes/batch.ts) shares. An Idempotency-Key
// replays the first response (api/idempotency.ts). The body and the Idempotency-Key are checked (400)
// before the key's scope (403), in the order of docs/http-contract.md "Common rules", and both before
// the Idempotency-Key is claimed.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Logger } from '../../platform/logger.js';
import { idempotencyKeyHeader, idempotent, idempotentDispatchId, markExecuting } from '../idempotency.js';
import { checkScope } from '../middleware/auth.js';
import { registrationBody } from '../../domain/dispatch-schemas.js';
import { parseOrBadRequest } from '../errors.js';
import { jsonBody } from '../middleware/json-body.js';
import { parseRegistration, register, type RegistrationDeps } from '../registration.js';

export function dispatchRoutes(router: Router, deps: RegistrationDeps & { logger: Logger }): void {
  router.post('/v1/dispatches', jsonBody(), checkedRegistration, idempotent(deps.pool, deps.logger), async (ctx) => {
    const key = ctx.state.apiKey!;
    const now = new Date();
    const registration = parseRegistration(ctx.request.body, key, now, idempotentDispatchId(ctx));
    const registered = await register(deps, key, registration, { now, executing: () => markExecuting(ctx) });
    ctx.status = registered.outcome === 'created' ? 201 : 200;
    if (registered.outcome === 'created') ctx.set('Location', `/v1/status/${registered.id}`);
    ctx.type = 'application/json';
    ctx.body = registered.record;
  });
}

/**
 * 400 for a bad body or Idempotency-Key, then 403 for a key without dispatches:write. The body's
 * shape only: its dispatch_date's bounds move with the clock, and bound a new dispatch only
 * (api/registration.ts `register`): checked after the Idempotency-Key, so that a retry within 24
 * hours replays the first response, and after the dispatch is looked up, so that the same id and
 * body again answers 200, even once its date has aged past them.
 */
const checkedRegistration: Middleware = async (ctx, next) => {
  parseOrBadRequest(registrationBody, ctx.request.body);
  idempotencyKeyHeader(ctx);
  checkScope(ctx.state.apiKey, 'dispatches:write');
  await next();
};
