// POST /v1/dispatches/batch (docs/http-contract.md): up to 1,000 registrations in one call. Each item goes
// through exactly what POST /v1/dispatches does (api/registration.ts: same validation, same
// idempotency), and its outcome — created, existing, or the error the single call would have
// answered — is reported at its index. One bad item never fails the others.
//
// Rate limit: a batch counts as one request per item. The request itself was counted like any
// other (it stands for the first item); the other items are counted here, all at once, as far as
// the key's window allows. Items beyond it are not attempted and report `rate_limit_exceeded`;
// like a refused request, they do not count.
//
// Idempotency-Key (api/idempotency.ts): the whole batch's response is replayed, unless some item
// was not attempted or failed by the service (rate limit, 503, 500): then nothing is kept and the
// same key may be sent again. Items without `id` get ids derived from the key and their index.
//
// The envelope and the Idempotency-Key are checked (400) before the key's scope (403), in the order of
// docs/http-contract.md "Common rules", and both before the Idempotency-Key is claimed.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { batchOf, type BatchItemResult } from '../../domain/dispatch-schemas.js';
import { UUID_V4 } from '../../domain/field-schemas.js';
import type { Logger } from '../../platform/logger.js';
import { asApiError, parseOrBadRequest } from '../errors.js';
import { idempotencyKeyHeader, idempotent, idempotentDispatchId, markExecuting, markNotReplayable } from '../idempotency.js';
import { checkScope } from '../middleware/auth.js';
import type { ApiKey } from '../key-cache.js';
import { jsonBody } from '../middleware/json-body.js';
import { retryAfterSeconds } from '../middleware/rate-limit.js';
import type { RateLimiter } from '../rate-limiter.js';
import { parseRegistration, register, type RegistrationDeps } from '../registration.js';

/**
 * The largest batch the contract allows still fits, however a standard JSON encoder writes it: 1,000
 * items with every text field at its limit in characters outside the Basic Multilingual Plane,
 * escaped to ASCII (Python's json.dumps default, 12 bytes a character) and indented, is 5.3 MB
 * (test/api/batch.test.ts). At 2 MB such a batch got a 413, and one item too many got a 413 instead
 * of the 400 that names `dispatches`.
 */
export const BATCH_BODY_LIMIT = '6mb';
/**
 * Registrations in flight at once per batch. Registration is an update-with-start that waits for
 * the workflow's first projection (~30–60/s on a 2-core machine); more in parallel
 * would not go faster, only crowd out every other request.
 */
const BATCH_CONCURRENCY = 8;

const envelope = batchOf(z.unknown());

type ItemOutcome = Omit<BatchItemResult, 'index'>;

/** Item errors a retry of the same batch may not get again: such a batch's response is not kept for replay. */
const RETRYABLE = new Set<string | undefined>(['rate_limit_exceeded', 'service_unavailable', 'internal_error']);

export function batchRoutes(router: Router, deps: RegistrationDeps & { limiter: RateLimiter; logger: Logger }): void {
  const idempotency = idempotent(deps.pool, deps.logger);
  const checked: Middleware = async (ctx, next) => {
    parseOrBadRequest(envelope, ctx.request.body);
    idempotencyKeyHeader(ctx);
    checkScope(ctx.state.apiKey, 'dispatches:write');
    await next();
  };
  router.post('/v1/dispatches/batch', jsonBody(BATCH_BODY_LIMIT), checked, idempotency, async (ctx) => {
    const key = ctx.state.apiKey!;
    const items = parseOrBadRequest(envelope, ctx.request.body).dispatches;
    markExecuting(ctx); // from here each item's error is in the 200's results

    let admitted = items.length;
    let refusal: ItemOutcome | undefined;
    if (items.length > 1) {
      const { granted, admission } = await deps.limiter.takeMany(`key:${key.id}`, items.length - 1);
      admitted = 1 + granted;
      ctx.set('X-RateLimit-Remaining', String(admission.remaining));
      if (admitted < items.length) {
        const retryAfter = retryAfterSeconds(admission);
        ctx.set('Retry-After', String(retryAfter));
        const message = `not attempted: the key's ${admission.limit} requests this minute are used; retry in ${retryAfter} s`;
        refusal = { result: 'error', error: { error: 'rate_limit_exceeded', message } };
      }
    }

    const outcomes: ItemOutcome[] = new Array(items.length);
    let unavailable: ItemOutcome | undefined;
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < admitted; i = next++) {
        // Once Temporal is unreachable, the rest would each wait out the deadline for the same answer.
        outcomes[i] = unavailable ?? (await registerItem(deps, key, items[i], ctx.state.requestId, idempotentDispatchId(ctx, i)));
        if (outcomes[i].error?.error === 'service_unavailable') unavailable ??= notAttempted(outcomes[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, admitted) }, worker));
    for (let i = admitted; i < items.length; i++) outcomes[i] = refusal!;
    if (outcomes.some((outcome) => RETRYABLE.has(outcome.error?.error))) markNotReplayable(ctx);

    ctx.body = { results: outcomes.map((outcome, index) => ({ index, ...outcome })) };
  });
}

async function registerItem(
  deps: RegistrationDeps & { logger: Logger },
  key: ApiKey,
  item: unknown,
  requestId: string,
  assignedId: string | undefined,
): Promise<ItemOutcome> {
  let id: string | undefined;
  try {
    const now = new Date();
    const registration = parseRegistration(item, key, now, assignedId);
    // The item's id is reported once its work begins: refused before (its body, a new dispatch's
    // dispatch_date out of bounds), an item without `id` names none.
    const registered = await register(deps, key, registration, { now, executing: () => (id = registration.id) });
    return { result: registered.outcome, id: registered.id };
  } catch (error) {
    if (!asApiError(error)) deps.logger.error({ err: error, request_id: requestId, dispatch_id: id }, 'batch item failed');
    return { result: 'error', id: id ?? sentId(item), error: itemError(error) };
  }
}

/** The item's own `id` when it is a valid dispatch id (lower-cased, as the service answers ids), for an item that failed validation. */
function sentId(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
  const id: unknown = (item as { id?: unknown }).id;
  return typeof id === 'string' && UUID_V4.test(id) ? id.toLowerCase() : undefined;
}

/** What POST /v1/dispatches would have answered, as `{ error, message }`. */
function itemError(error: unknown): NonNullable<ItemOutcome['error']> {
  const known = asApiError(error);
  if (known) return { error: known.code, message: known.message };
  return { error: 'internal_error', message: 'unexpected server error; retry this item' };
}

function notAttempted(outcome: ItemOutcome): ItemOutcome {
  return { result: 'error', error: { error: 'service_unavailable', message: `not attempted: ${outcome.error!.message}` } };
}
