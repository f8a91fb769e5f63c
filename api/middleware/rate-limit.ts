// Rate limiting (DESIGN.md §3). `countRequest` counts every request against its key's window (a
// keyless or invalid-key request against its client IP's) and sets the X-RateLimit-* headers, so
// that every response, errors included, carries them. `enforceRateLimit` answers 429; it runs after
// the 401 check because the spec orders 401 before 429.
import type { Middleware } from 'koa';
import { ApiError } from '../errors.js';
import type { FastPathRequest } from '../fast-status.js';
import type { RateLimiter } from '../rate-limiter.js';

export function countRequest(limiter: RateLimiter): Middleware {
  return async (ctx, next) => {
    const subject = ctx.state.apiKey ? `key:${ctx.state.apiKey.id}` : `ip:${ctx.ip}`;
    // A request the fast path already counted (api/fast-status.ts) is not counted again.
    const admission = (ctx.req as FastPathRequest).fastPath?.admission ?? (await limiter.take(subject));
    ctx.state.admission = admission;
    ctx.set('X-RateLimit-Limit', String(admission.limit));
    ctx.set('X-RateLimit-Remaining', String(admission.remaining));
    ctx.set('X-RateLimit-Reset', String(admission.resetAt));
    await next();
  };
}

export function enforceRateLimit(): Middleware {
  return async (ctx, next) => {
    const admission = ctx.state.admission;
    if (admission && !admission.admitted) {
      const retryAfter = Math.max(1, Math.ceil(admission.resetAt - Date.now() / 1000));
      throw new ApiError(429, 'rate_limit_exceeded', `more than ${admission.limit} requests this minute; retry in ${retryAfter} s`, {
        'Retry-After': String(retryAfter),
      });
    }
    await next();
  };
}
