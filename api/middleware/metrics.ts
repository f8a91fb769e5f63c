// Request metrics (docs/monitoring.md "Metrics"): every answered request observed in
// cds_http_request_duration_seconds by method, route and status, and each 429 in
// cds_rate_limit_refusals_total by the window it counted against. First in the chain, so it sees
// the status errors were rendered to and the time of every layer. The route label is the router's
// path template (`/v1/status/:id`), never the URL: ids must not become label values. A request
// answered before the router ran (401, 429) is labelled by the route it was for (`routers`); one no
// route matches is `unmatched`. The status fast path (api/fast-status.ts) observes its own answers
// with `observeRequest`.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { httpRequestDuration, rateLimitRefusals } from '../../platform/metrics.js';
import type { TracedResponse } from '../../platform/tracing.js';

export const UNMATCHED_ROUTE = 'unmatched';

/** Records one answered request; `started` is performance.now() when it arrived. */
export function observeRequest(method: string, route: string, status: number, started: number): void {
  httpRequestDuration.observe({ method, route, status: String(status) }, (performance.now() - started) / 1000);
}

/** The path template of the route of `routers` that `path` and `method` would reach, if any. */
export function routeTemplate(routers: Router[], path: string, method: string): string | undefined {
  for (const router of routers) {
    const matched = router.match(path, method);
    const layer = [...matched.pathAndMethod, ...matched.path].find((candidate) => candidate.methods.length > 0);
    if (layer) return String(layer.path);
  }
  return undefined;
}

/** `routers`: those whose routes run after the middleware that may answer first (auth, rate limit). */
export function requestMetrics(routers: Router[] = []): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const route = matched === undefined ? routeTemplate(routers, ctx.path, ctx.method) : String(matched);
      observeRequest(ctx.method, route ?? UNMATCHED_ROUTE, ctx.status, started);
      (ctx.res as TracedResponse).traceRoute = route ?? UNMATCHED_ROUTE; // the server span's name (platform/tracing.ts)
      const admission = ctx.state.admission;
      if (ctx.status === 429 && admission && !admission.admitted) rateLimitRefusals.inc({ kind: ctx.state.apiKey ? 'key' : 'ip' });
    }
  };
}
