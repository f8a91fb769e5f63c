// The hot path of the service, GET /v1/status/{id} answered 200 (or 304 for a poller's
// `If-None-Match` naming the current tag) in front of Koa. It takes the read
// decision of api/status-read.ts step by step, as the Koa route does (api/routes/status.ts): request
// id, API key cache and scope, the shared rate-limit counter (every request counted), the projection
// read and access check, the answer's headers, and the request log. It only ever answers the
// success case, and only for a key this process has verified before (api/key-cache.ts `classify`):
// any other header is left to the Koa chain, where api/request-admission.ts makes a client IP's
// window pay for its lookup. The projection is read only once the request is admitted, so a refused
// request costs no read. Anything else (no, bad or new key, missing scope, `?locale=`, a refused
// request, an unknown or foreign dispatch, any failure) falls through to the Koa app, which stays
// the one place that renders errors; a request already counted carries its admission along so it
// is not counted twice. Why: Koa's context, router and ten async layers cost about as much CPU as the read itself
// (bench/status-read/README.md), and this is the endpoint issuers poll.
import type http from 'node:http';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { ApiKeyCache } from './key-cache.js';
import { rateLimitHeaders, rateLimitSubject } from './middleware/rate-limit.js';
import { requestIdFor } from './middleware/request-id.js';
import { observeRequest } from './middleware/metrics.js';
import { logRequest } from './middleware/request-log.js';
import type { RateLimiter } from './rate-limiter.js';
import {
  loadStatus,
  statusAnswer,
  statusHeaders,
  statusIdOf,
  statusReader,
  type FastPathRequest,
  type StatusAnswer,
} from './status-read.js';

const STATUS_PATH = /^\/v1\/status\/([0-9a-fA-F-]{36})$/;
/** The Koa route's template (api/routes/status.ts): one series for both paths of the read. */
const STATUS_ROUTE = '/v1/status/:id';

export function createFastStatus(deps: {
  keys: ApiKeyCache;
  limiter: RateLimiter;
  pool: Pool;
  logger: Logger;
  /** PREDICTION_REFRESH_INTERVAL: the Cache-Control max-age runs to the next refresh. */
  refreshIntervalMs: number;
}) {
  /** Answers the request and returns true, or returns false having written nothing. */
  return async function serveStatus(req: FastPathRequest, res: http.ServerResponse): Promise<boolean> {
    const started = performance.now();
    if (req.method !== 'GET') return false;
    const param = STATUS_PATH.exec(req.url ?? '')?.[1];
    const id = param && statusIdOf(param);
    if (!id) return false;
    const header = req.headers.authorization;
    if (deps.keys.classify(header) !== 'known') return false;
    const auth = await deps.keys.authenticate(header).catch(() => undefined);
    const key = statusReader(auth?.key);
    if (!key) return false;

    const admission = await deps.limiter.take(rateLimitSubject(key));
    req.fastPath = { admission };
    if (!admission.admitted) return false;
    let answer: StatusAnswer;
    try {
      answer = statusAnswer(key, id, await loadStatus(deps.pool, id, undefined), undefined, req.headers['if-none-match']);
    } catch {
      return false; // unknown, other mode or other issuer, or the read failed: Koa answers
    }

    const requestId = requestIdFor(req.headers['x-request-id']);
    const headers = statusHeaders(rateLimitHeaders({ 'X-Request-Id': requestId }, admission), answer, deps.refreshIntervalMs);
    const status = answer.body === undefined ? 304 : 200;
    res.writeHead(status, headers);
    res.end(answer.body);
    logRequest(deps.logger, { requestId, method: 'GET', path: req.url!, status, started, keyId: key.id });
    observeRequest('GET', STATUS_ROUTE, status, started);
    return true;
  };
}
