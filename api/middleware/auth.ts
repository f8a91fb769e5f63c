// Authentication and authorisation. `authenticate` only resolves the key (so that the rate limiter
// can count a keyless request against its client IP and still set its headers, even when the key
// lookup itself failed); `requireApiKey` then answers 401 (or rethrows that failure), and
// `requireScope` 403 for a key without the route's scope.
import type { Middleware } from 'koa';
import type { Scope } from '../../domain/api-keys.js';
import { forbidden, unauthorized } from '../errors.js';
import type { ApiKeyCache } from '../key-cache.js';

export function authenticate(keys: ApiKeyCache): Middleware {
  return async (ctx, next) => {
    try {
      const result = await keys.authenticate(ctx.get('authorization') || undefined);
      ctx.state.apiKey = result.key;
      ctx.state.authProblem = result.problem;
    } catch (error) {
      ctx.state.authFailure = error;
    }
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

export function requireScope(scope: Scope): Middleware {
  return async (ctx, next) => {
    if (!ctx.state.apiKey?.scopes.includes(scope)) throw forbidden(`this API key lacks the "${scope}" scope`);
    await next();
  };
}
