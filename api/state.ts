// What the middleware chain leaves in `ctx.state` for the routes, typed once for every handler.
import type { Admission } from './rate-limiter.js';
import type { ApiKey } from './key-cache.js';

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    /** The caller's key, when the Authorization header held a valid one. */
    apiKey?: ApiKey;
    /** Why the Authorization header was refused, for the 401 message. */
    authProblem?: string;
    /** The key lookup failed (e.g. Postgres unreachable): rethrown where a key is required. */
    authFailure?: unknown;
    admission?: Admission;
  }
}
