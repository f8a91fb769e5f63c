// POST /v1/dispatches: registers one dispatch (docs/http-contract.md). 201 with Location when created, 200
// with the current record when the same body was already registered; the rules live in
// api/registration.ts, which the batch route (api/routes/batch.ts) shares. An Idempotency-Key
// replays the first response (api/idempotency.ts).
import type Router from '@koa/router';
import type { Logger } from '../../platform/logger.js';
import { idempotent, idempotentDispatchId, markExecuting } from '../idempotency.js';
import { requireScope } from '../middleware/auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { parseRegistration, register, type RegistrationDeps } from '../registration.js';

export function dispatchRoutes(router: Router, deps: RegistrationDeps & { logger: Logger }): void {
  router.post('/v1/dispatches', requireScope('dispatches:write'), jsonBody(), idempotent(deps.pool, deps.logger), async (ctx) => {
    const key = ctx.state.apiKey!;
    const registration = parseRegistration(ctx.request.body, key, new Date(), idempotentDispatchId(ctx));
    markExecuting(ctx);
    const registered = await register(deps, key, registration);
    ctx.status = registered.outcome === 'created' ? 201 : 200;
    if (registered.outcome === 'created') ctx.set('Location', `/v1/status/${registered.id}`);
    ctx.type = 'application/json';
    ctx.body = registered.record;
  });
}
