// Rate limiting (docs/http-contract.md). Each request was counted by `authenticate`
// (middleware/auth.ts, deciding with api/request-admission.ts) against its key's window, or its
// client IP's when it has no valid key. `rateLimitHeaders` sets the X-RateLimit-* headers of that
// window on every response, errors included; `enforceRateLimit` answers 429. It runs before the 401
// check: for a request with a valid key the order does not matter (no 401), and for one without,
// the IP window's 429 once it is used up is the only way to refuse a keyless or forged-key flood.
// The status fast path (api/fast-status.ts) counts and sets headers with `rateLimitSubject` and
// `rateLimitHeaders` too.
import type http from 'node:http';
import type { Middleware } from 'koa';
import { ApiError } from '../errors.js';
import type { ApiKey } from '../key-cache.js';
import type { Admission } from '../rate-limiter.js';

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

/** X-RateLimit-* headers of the window the request counted against, on every response. */
export function setRateLimitHeaders(): Middleware {
  return async (ctx, next) => {
    if (ctx.state.admission) ctx.set(rateLimitHeaders({}, ctx.state.admission) as Record<string, string>);
    await next();
  };
}

/** Whole seconds until the admission's window resets (at least 1): its Retry-After. */
export function retryAfterSeconds(admission: Admission): number {
  return Math.max(1, Math.ceil(admission.resetAt - Date.now() / 1000));
}

/** The 429 of a refused admission, with Retry-After; `what` says what was counted (`requests this minute`). */
export function rateLimitExceeded(admission: Admission, what = 'requests this minute'): ApiError {
  const retryAfter = retryAfterSeconds(admission);
  return new ApiError(429, 'rate_limit_exceeded', `more than ${admission.limit} ${what}; retry in ${retryAfter} s`, {
    'Retry-After': String(retryAfter),
  });
}

export function enforceRateLimit(): Middleware {
  return async (ctx, next) => {
    const admission = ctx.state.admission;
    if (admission && !admission.admitted) throw rateLimitExceeded(admission);
    await next();
  };
}
