// Rate limiting (docs/http-contract.md). `countRequest` counts every request against its key's window (a
// keyless or invalid-key request against its client IP's) and sets the X-RateLimit-* headers, so
// that every response, errors included, carries them. `enforceRateLimit` answers 429; it runs after
// the 401 check because the spec orders 401 before 429. The status fast path (api/fast-status.ts)
// counts and sets headers with the same two functions, `rateLimitSubject` and `rateLimitHeaders`.
import type http from 'node:http';
import type { Middleware } from 'koa';
import { ApiError } from '../errors.js';
import type { ApiKey } from '../key-cache.js';
import type { Admission, RateLimiter } from '../rate-limiter.js';
import type { FastPathRequest } from '../status-read.js';

/** What a request is counted against: its key, or its client IP when it has no valid key. */
export function rateLimitSubject(key: ApiKey | undefined, ip?: string): string {
  return key ? `key:${key.id}` : `ip:${ip}`;
}

/** Writes the X-RateLimit-* headers of an admission into `headers`, and returns it. */
export function rateLimitHeaders(headers: http.OutgoingHttpHeaders, admission: Admission): http.OutgoingHttpHeaders {
  headers['X-RateLimit-Limit'] = String(admission.limit);
  headers['X-RateLimit-Remaining'] = String(admission.remaining);
  headers['X-RateLimit-Reset'] = String(admission.resetAt);
  return headers;
}

export function countRequest(limiter: RateLimiter): Middleware {
  return async (ctx, next) => {
    // A request the fast path already counted (api/fast-status.ts) is not counted again.
    const admission = (ctx.req as FastPathRequest).fastPath?.admission ?? (await limiter.take(rateLimitSubject(ctx.state.apiKey, ctx.ip)));
    ctx.state.admission = admission;
    ctx.set(rateLimitHeaders({}, admission) as Record<string, string>);
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
