// The hot path of the service, GET /v1/status/{id} answered 200, served in front of Koa with the
// same parts Koa's chain uses: request id, API key cache, scope check, the shared rate-limit
// counter (every request counted), the projection read and the request log. It only ever answers
// the success case. Anything else (no or bad key, missing scope, `?locale=`, a refused request, an
// unknown or foreign dispatch, any failure) falls through to the Koa app, which stays the one place
// that renders errors; a request already counted carries its admission along so it is not counted
// twice. Why: Koa's context, router and ten async layers cost about as much CPU as the read itself
// (bench/status-read/README.md), and this is the endpoint issuers poll.
import type http from 'node:http';
import { findDispatchRecord } from '../db/dispatches.js';
import type { Pool } from '../db/pool.js';
import { UUID_V4 } from '../domain/schemas.js';
import type { Logger } from '../platform/logger.js';
import type { ApiKeyCache } from './key-cache.js';
import { requestIdFor } from './middleware/request-id.js';
import { logRequest } from './middleware/request-log.js';
import type { Admission, RateLimiter } from './rate-limiter.js';

const STATUS_PATH = /^\/v1\/status\/([0-9a-fA-F-]{36})$/;

/** What the fast path hands to Koa when it falls through after counting the request. */
export interface FastPathCarry {
  admission?: Admission;
}

export type FastPathRequest = http.IncomingMessage & { fastPath?: FastPathCarry };

export function createFastStatus(deps: { keys: ApiKeyCache; limiter: RateLimiter; pool: Pool; logger: Logger }) {
  /** Answers the request and returns true, or returns false having written nothing. */
  return async function serveStatus(req: FastPathRequest, res: http.ServerResponse): Promise<boolean> {
    const started = performance.now();
    if (req.method !== 'GET') return false;
    const id = STATUS_PATH.exec(req.url ?? '')?.[1];
    if (!id || !UUID_V4.test(id)) return false;
    const auth = await deps.keys.authenticate(req.headers.authorization).catch(() => undefined);
    const key = auth?.key;
    if (!key || !key.scopes.includes('status:read')) return false;

    const dispatchId = id.toLowerCase();
    const row = findDispatchRecord(deps.pool, dispatchId);
    row.catch(() => undefined); // awaited below only if the request is admitted
    const admission = await deps.limiter.take(`key:${key.id}`);
    req.fastPath = { admission };
    if (!admission.admitted) return false;
    const found = await row.catch(() => undefined);
    if (!found || found.mode !== key.mode || found.issuerId !== key.issuerId) return false;

    const requestId = requestIdFor(req.headers['x-request-id']);
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(found.recordJson),
      'X-Request-Id': requestId,
      'X-RateLimit-Limit': admission.limit,
      'X-RateLimit-Remaining': admission.remaining,
      'X-RateLimit-Reset': admission.resetAt,
    });
    res.end(found.recordJson);
    logRequest(deps.logger, { requestId, method: 'GET', path: req.url!, status: 200, started, keyId: key.id });
    return true;
  };
}
