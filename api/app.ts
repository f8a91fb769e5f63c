// The Koa application: the middleware chain in one visible order, then the routes (docs/http-contract.md).
// Check order for a request: 401 → 429 → 400 → 404/403, except that a request without a valid key
// gets its client IP window's 429, once that is used up, rather than 401 (api/request-admission.ts).
// Stateless apart from short-lived caches, so any number of API processes can run against one
// Postgres and one Temporal. The HTML pages
// (the dashboard) are handed in by the composition root, api/server.ts: this module does not know them.
import type http from 'node:http';
import Router from '@koa/router';
import type { Client } from '@temporalio/client';
import Koa, { type Middleware } from 'koa';
import type { Pool } from '../db/pool.js';
import { createCarrierEventIngest } from '../ingest/carrier-events.js';
import { createFeedIngest } from '../ingest/tracking-feeds.js';
import { dispatchWorkflowOptions } from '../temporal/client.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { feedCheckpoints } from '../platform/metrics.js';
import { createFastStatus } from './fast-status.js';
import { FeedCache } from './feed-cache.js';
import { FeedCounter } from './feed-counts.js';
import { ApiKeyCache } from './key-cache.js';
import { authenticate, requireApiKey } from './middleware/auth.js';
import { renderErrors } from './middleware/errors.js';
import { requestMetrics } from './middleware/metrics.js';
import { enforceRateLimit, setRateLimitHeaders } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { requestLog } from './middleware/request-log.js';
import { openApiJson } from './openapi.js';
import { RateLimiter } from './rate-limiter.js';
import { RequestAdmission } from './request-admission.js';
import { batchRoutes } from './routes/batch.js';
import { carrierEventRoutes } from './routes/carrier-events.js';
import { dispatchRoutes } from './routes/dispatches.js';
import { erasureRoutes } from './routes/erasures.js';
import { docsRouter } from './routes/docs.js';
import { healthRouter, type Readiness } from './routes/health.js';
import { inboundRouter } from './routes/inbound.js';
import { listRoutes } from './routes/list.js';
import { metricsRouter } from './routes/metrics.js';
import { statusRoutes } from './routes/status.js';
import { testHelperRoutes } from './routes/test-helpers.js';
import { replayRoutes } from './routes/replays.js';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.js';
import { webhookEventRoutes } from './routes/webhook-events.js';
import { trackingFeedRoutes } from './routes/tracking-feeds.js';
import { trackingLinkRoutes } from './routes/tracking-links.js';
import { trackingPage } from './tracking-page/index.js';
import './state.js';

export interface AppDeps {
  config: Config;
  pool: Pool;
  temporal: Client;
  logger: Logger;
  /** Set to draining by api/main.ts on SIGTERM: /readyz answers 503 from then on. */
  readiness?: Readiness;
}

const OPENAPI_PATH = '/v1/openapi.json';

/** What an app holds that outlives a request; released by `disposeApp`. */
const resources = new WeakMap<
  Koa,
  {
    limiter: RateLimiter;
    ipLimiter: RateLimiter;
    pageLimiter: RateLimiter;
    feedLimiter: RateLimiter;
    feedCounter: FeedCounter;
    keys: ApiKeyCache;
  }
>();

/**
 * `pages`: HTML pages with their own sessions, CSRF and error pages (the dashboard), served after
 * the health routes and before API-key auth, which they do not use.
 */
export function createApp(deps: AppDeps, mounted: { pages?: Middleware } = {}): Koa {
  const { config, pool, logger } = deps;
  const keys = new ApiKeyCache(pool, config.API_KEY_CACHE_TTL_MS, logger);
  const limiter = new RateLimiter(pool, config.RATE_LIMIT_PER_MINUTE, logger, config.RATE_LIMIT_LEASE_FROM);
  limiter.startCleanup();
  // Requests without a valid key: per client IP, a window of their own.
  const ipLimiter = new RateLimiter(pool, config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE, logger, config.RATE_LIMIT_LEASE_FROM);
  ipLimiter.startCleanup(false);
  const admission = new RequestAdmission(keys, limiter, ipLimiter);
  // The cardholder's tracking page: per client IP, a window of its own (docs/tracking-page.md "The page").
  const pageLimiter = new RateLimiter(pool, config.TRACKING_PAGE_RATE_PER_MINUTE, logger, config.RATE_LIMIT_LEASE_FROM);
  pageLimiter.startCleanup(false);
  // Tracking feeds' inbound endpoint: per feed, a window of its own (docs/tracking-feeds.md "Inbound").
  const feedLimiter = new RateLimiter(pool, config.FEED_RATE_PER_MINUTE, logger, config.RATE_LIMIT_LEASE_FROM);
  feedLimiter.startCleanup(false);

  const health = healthRouter(deps);
  const v1 = new Router();
  v1.get(OPENAPI_PATH, (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApiJson();
  });
  statusRoutes(v1, pool, config.PREDICTION_REFRESH_INTERVAL);
  const ingest = createCarrierEventIngest({
    pool,
    temporal: deps.temporal,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowOptions: dispatchWorkflowOptions(config),
  });
  const feedCounter = new FeedCounter(pool, logger);
  const feedIngest = createFeedIngest({
    pool,
    ingest,
    countIgnored: (feed, count) => {
      feedCounter.add(feed.id, { ignored: count }, false);
      feedCheckpoints.inc({ provider: feed.provider, result: 'ignored' }, count);
    },
  });
  const feeds = new FeedCache(pool, config.API_KEY_CACHE_TTL_MS);
  dispatchRoutes(v1, { ...deps, ingest, feedIngest });
  carrierEventRoutes(v1, { ingest, pool });
  listRoutes(v1, pool);
  batchRoutes(v1, { ...deps, ingest, feedIngest, limiter });
  testHelperRoutes(v1, { pool, ingest });
  webhookEndpointRoutes(v1, deps);
  webhookEventRoutes(v1, pool);
  replayRoutes(v1, deps);
  trackingLinkRoutes(v1, deps);
  erasureRoutes(v1, deps);
  trackingFeedRoutes(v1, { pool, config, feeds });
  const inbound = inboundRouter({ feeds, feedIngest, counter: feedCounter, limiter: feedLimiter, ipLimiter, logger });

  const app = new Koa();
  // Behind a proxy, ctx.ip is the client's address from its header (docs/security.md); otherwise
  // the socket's, and the header is ignored, so no client can choose its own address.
  app.proxy = config.TRUST_PROXY;
  app.proxyIpHeader = config.TRUST_PROXY_HEADER;
  app.maxIpsCount = config.TRUST_PROXY_HOPS;
  app.use(requestMetrics([v1, inbound])); // latency by route template and status, 429s by window (GET /metrics)
  app.use(requestId()); // X-Request-Id on every response
  app.use(requestLog(logger)); // one line per request, never the key
  app.use(renderErrors(logger)); // the one place errors become { error, message }
  app.use(health.routes()); // /healthz, /readyz: no key, no rate limit
  app.use(metricsRouter().routes()); // /metrics: no key, no rate limit
  app.use(docsRouter().routes()); // /docs: the API reference page and its script, no key, not counted
  app.use(trackingPage({ pool, config, logger, limiter: pageLimiter })); // /t/…: the cardholder's tracking page, no key, its own per-IP limit
  if (mounted.pages) app.use(mounted.pages); // /dashboard: HTML pages with their own sessions, CSRF and error pages
  app.use(inbound.routes()); // /v1/inbound/…: tracking feeds, no key: the provider's own signature, a per-feed limit; 405 for other methods
  app.use(authenticate(admission)); // resolves the key, if any (cached), and counts the request: key or client IP window
  app.use(setRateLimitHeaders()); // X-RateLimit-* headers
  app.use(enforceRateLimit()); // 429 (for a request without a valid key, before its 401)
  app.use(requireApiKey([OPENAPI_PATH])); // 401
  app.use(v1.routes()); // 400 → 404/403, per route
  app.use(v1.allowedMethods()); // 405 with Allow

  resources.set(app, { limiter, ipLimiter, pageLimiter, feedLimiter, feedCounter, keys });
  return app;
}

/**
 * The HTTP handler: the fast path for a successful GET /v1/status/{id} (api/fast-status.ts), and
 * the Koa app for everything else, with the same key cache and rate-limit counter.
 */
export function createRequestHandler(app: Koa, deps: AppDeps): http.RequestListener {
  const { keys, limiter } = resources.get(app)!;
  const serveStatus = createFastStatus({
    keys,
    limiter,
    pool: deps.pool,
    logger: deps.logger,
    refreshIntervalMs: deps.config.PREDICTION_REFRESH_INTERVAL,
  });
  const koa = app.callback();
  return (req, res) => {
    // Node does not await a request listener: the handler starts the work and returns.
    void serveStatus(req, res)
      .catch(() => false)
      .then((served) => {
        if (!served && !res.headersSent) void koa(req, res);
      });
  };
}

/** Stops the app's background work (old rate-limit windows cleanup) and writes the feed counts it holds. */
export async function disposeApp(app: Koa): Promise<void> {
  await resources.get(app)?.feedCounter.close();
  resources.get(app)?.limiter.stopCleanup();
  resources.get(app)?.ipLimiter.stopCleanup();
  resources.get(app)?.pageLimiter.stopCleanup();
  resources.get(app)?.feedLimiter.stopCleanup();
}
