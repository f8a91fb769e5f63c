// The read decision of GET /v1/status/{id}, in one place for its two entry points: api/fast-status.ts
// (a successful plain read, answered in front of Koa because issuers poll it) and the Koa route
// api/routes/status.ts (every error, and `?locale=`). Each step is one function that both paths
// call, so a new concern of the status read is added once:
//
//   1. request id: middleware/request-id.ts `requestIdFor`;
//   2. auth:       the key from api/key-cache.ts, allowed by `STATUS_READ_SCOPE` (fast path
//                  `statusReader`; Koa `checkScope(…, STATUS_READ_SCOPE)` after the 400s, 401/403);
//   3. rate limit: middleware/rate-limit.ts `rateLimitSubject` and `rateLimitHeaders` (a request
//                  the fast path counted carries its admission to Koa, `FastPathRequest`, and is
//                  never counted twice);
//   4. the read:   `statusIdOf` (Koa: routes/access.ts `dispatchIdParam`, 400), `loadStatus`,
//                  `statusBody`: the projection read, the access check (404 other mode, 403 other
//                  issuer) and the body sent;
//   5. the answer: `statusHeaders`, the headers of a read answered 200 (a caching or conditional
//                  header goes there, and both paths send it);
//   6. log line:   middleware/request-log.ts `logRequest`;
//   7. errors:     thrown as ApiError and rendered by middleware/errors.ts only: the fast path never
//                  renders one, it falls through to Koa, which decides again from step 1.
//
// The fast path calls these with plain values: nothing here allocates per request beyond what the
// response needs.
import type http from 'node:http';
import { findDispatch, findDispatchRecord, type DispatchAccessRow, type DispatchRow } from '../db/dispatches.js';
import type { Pool } from '../db/pool.js';
import type { Scope } from '../domain/api-keys.js';
import { renderSuggestion } from '../domain/messages.js';
import { UUID_V4 } from '../domain/schemas.js';
import type { ApiKey } from './key-cache.js';
import type { Admission } from './rate-limiter.js';
import { checkAccess } from './routes/access.js';

export const STATUS_READ_SCOPE: Scope = 'status:read';

const JSON_TYPE = 'application/json; charset=utf-8';

/** The key, when it may read status; undefined for no key or a key without the scope (Koa: 401/403). */
export function statusReader(key: ApiKey | undefined): ApiKey | undefined {
  return key?.scopes.includes(STATUS_READ_SCOPE) ? key : undefined;
}

/**
 * What the fast path hands to Koa when it falls through after counting the request: its admission,
 * so that middleware/rate-limit.ts does not count it twice.
 */
export interface FastPathCarry {
  admission?: Admission;
}

export type FastPathRequest = http.IncomingMessage & { fastPath?: FastPathCarry };

/** The rule of routes/access.ts `dispatchIdParam` without its 400: the id in lower case, or undefined when not a UUID v4. */
export function statusIdOf(param: string): string | undefined {
  return UUID_V4.test(param) ? param.toLowerCase() : undefined;
}

/**
 * The projection read: only the stored record for a plain read, the whole row when `?locale=`
 * re-renders `ui_suggestion`. Read only once the request is admitted, on both paths.
 */
export function loadStatus(pool: Pool, id: string, locale: string | undefined): Promise<DispatchAccessRow | DispatchRow | undefined> {
  return locale === undefined ? findDispatchRecord(pool, id) : findDispatch(pool, id);
}

/** The body sent: the stored JSON text as is, or with `ui_suggestion` in the requested locale. Throws 404/403. */
export function statusBody(key: ApiKey, id: string, row: DispatchAccessRow | DispatchRow | undefined, locale: string | undefined): string {
  const found = checkAccess(key, id, row);
  return locale === undefined ? found.recordJson : withLocale(found as DispatchRow, locale);
}

/** The headers of a status read answered 200 (besides those of every response: request id, rate limit). */
export function statusHeaders(headers: http.OutgoingHttpHeaders, body: string): http.OutgoingHttpHeaders {
  headers['Content-Type'] = JSON_TYPE;
  headers['Content-Length'] = Buffer.byteLength(body);
  return headers;
}

function withLocale(row: DispatchRow, locale: string): string {
  const record = JSON.parse(row.recordJson);
  record.ui_suggestion = renderSuggestion({
    status: row.status,
    window: { min: row.windowMin, max: row.windowMax },
    confidence: row.confidenceLevel,
    exceptionReason: row.exceptionReason ?? undefined,
    requestedLocale: locale,
    registeredLocale: row.locale ?? undefined,
    countryCode: row.countryCode,
  });
  return JSON.stringify(record);
}
