// Authentication and authorisation. `authenticate` resolves the key and counts the request, both
// decided by api/request-admission.ts (a request without a valid key counts against its client IP,
// and a flood of them is refused before any key lookup); `requireApiKey` then answers 401 (or
// rethrows the lookup's failure), and each route's `checkScope` 403 for a key without its scope.
import type { Middleware } from 'koa';
import type { Scope } from '../../domain/api-keys.js';
import { forbidden, unauthorized } from '../errors.js';
import type { ApiKey } from '../key-cache.js';
import type { RequestAdmission } from '../request-admission.js';
import type { FastPathRequest } from '../status-read.js';

export function authenticate(admission: RequestAdmission): Middleware {
  return async (ctx, next) => {
    // A request the fast path already counted (api/fast-status.ts) is not counted again.
    const counted = (ctx.req as FastPathRequest).fastPath?.admission;
    const result = await admission.admit(ctx.get('authorization') || undefined, ctx.ip, counted);
    ctx.state.apiKey = result.key;
    ctx.state.authProblem = result.problem;
    ctx.state.authFailure = result.failure;
    ctx.state.admission = result.admission;
    await next();
  };
}

/** 401 unless the request carries a valid key; `publicPaths` need none. */
export function requireApiKey(publicPaths: readonly string[]): Middleware {
  const open = new Set(publicPaths);
  return async (ctx, next) => {
    if (!ctx.state.apiKey && !open.has(ctx.path)) throw ctx.state.authFailure ?? unauthorized(ctx.state.authProblem);
    await next();
  };
}

/**
 * The key, or 403 when it lacks `scope`. Each route calls it once it has checked its input (400) and
 * before it looks the dispatch up (404/403), in the order of docs/http-contract.md "Common rules"; a
 * middleware that ran before the route's parsing would answer 403 for a request that is also 400.
 */
export function checkScope(key: ApiKey | undefined, scope: Scope): ApiKey {
  if (!key?.scopes.includes(scope)) throw forbidden(`this API key lacks the "${scope}" scope`);
  return key;
}
