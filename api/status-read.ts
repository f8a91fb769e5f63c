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
//   4. the read:   `statusIdOf` (Koa: routes/access.ts `dispatchIdParam`, 400), `loadStatus`:
//                  the projection read; the access check (404 other mode, 403 other issuer) is
//                  the first step of `statusAnswer`;
//   5. the answer: `statusAnswer` (the weak ETag of the projection version and locale, and
//                  `If-None-Match` → not modified, checked only after the access check, so a foreign
//                  key's matching tag still gets its 403) and `statusHeaders`, the headers of a read
//                  answered 200 or 304 (ETag, Cache-Control); both paths send them;
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
import { UUID_V4 } from '../domain/field-schemas.js';
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

/** What a read answers: its entity tag, and the body, or none when `If-None-Match` named the tag (304). */
export interface StatusAnswer {
  tag: string;
  body?: string;
}

/**
 * The access check (throws 404/403), then the tag, then the body: the stored JSON text as is, or
 * with `ui_suggestion` in the requested locale, unless `ifNoneMatch` matches the tag.
 */
export function statusAnswer(
  key: ApiKey,
  id: string,
  row: DispatchAccessRow | DispatchRow | undefined,
  locale: string | undefined,
  ifNoneMatch?: string,
): StatusAnswer {
  const found = checkAccess(key, id, row);
  const tag = statusTag(found.version, locale);
  if (ifNoneMatch !== undefined && noneMatchNames(ifNoneMatch, tag)) return { tag };
  return { tag, body: locale === undefined ? found.recordJson : withLocale(found as DispatchRow, locale) };
}

/** The body sent for an unconditional read. Throws 404/403. */
export function statusBody(key: ApiKey, id: string, row: DispatchAccessRow | DispatchRow | undefined, locale: string | undefined): string {
  return statusAnswer(key, id, row, locale).body!;
}

/**
 * The weak entity tag of a status answer. The stored record is written only by the projection
 * upsert (db/dispatches.ts), and only with a strictly newer version (a prediction refresh that moves
 * the window writes a new version too), so the version moves with every change of the body; the
 * locale picks the rendering of `ui_suggestion`. Weak: a deployment that rewords a message keeps the
 * tag (the record means the same).
 */
export function statusTag(version: string, locale: string | undefined): string {
  return `W/"${version}-${locale ?? 'default'}"`;
}

/**
 * RFC 9110 §13.1.2 `If-None-Match`: `*`, or a list of entity tags, any of which equals `tag` by weak
 * comparison (the opaque tags are equal, `W/` ignored on both sides). A malformed member matches nothing.
 */
export function noneMatchNames(ifNoneMatch: string, tag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = tag.replace(/^W\//, '');
  for (const member of ifNoneMatch.matchAll(/(?:W\/)?("[^"]*")/g)) if (member[1] === opaque) return true;
  return false;
}

/** The longest max-age sent: an hour, whatever the refresh interval. */
export const MAX_STATUS_AGE_SECONDS = 3600;

/**
 * Seconds until the next prediction refresh could change the record: the refresh is a Temporal
 * Schedule every PREDICTION_REFRESH_INTERVAL (worker/schedules.ts), an interval spec without offset
 * or jitter, which Temporal aligns to the Unix epoch (runs at n × interval), so the next run is
 * known from the clock alone. At least 1, at most MAX_STATUS_AGE_SECONDS. A carrier event can change
 * the record sooner: that is what revalidation with `If-None-Match` is for.
 */
export function statusMaxAge(refreshIntervalMs: number, now: number = Date.now()): number {
  const untilNext = refreshIntervalMs - (now % refreshIntervalMs);
  return Math.min(MAX_STATUS_AGE_SECONDS, Math.max(1, Math.ceil(untilNext / 1000)));
}

/**
 * The headers of a status read answered 200 or 304 (besides those of every response: request id,
 * rate limit): ETag and Cache-Control on both, the body's type and length on a 200.
 */
export function statusHeaders(
  headers: http.OutgoingHttpHeaders,
  answer: StatusAnswer,
  refreshIntervalMs: number,
): http.OutgoingHttpHeaders {
  headers['ETag'] = answer.tag;
  headers['Cache-Control'] = `private, max-age=${statusMaxAge(refreshIntervalMs)}`;
  if (answer.body !== undefined) {
    headers['Content-Type'] = JSON_TYPE;
    headers['Content-Length'] = Buffer.byteLength(answer.body);
  }
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
