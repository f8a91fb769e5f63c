// GET /metrics: this process's Prometheus metrics (platform/metrics.ts), outside /v1 like the
// health routes: no key, no rate limit, not counted in any window. Scraped inside the cluster; the
// Helm chart's Ingress routes only /v1, /docs and /dashboard (docs/monitoring.md "Metrics").
import Router from '@koa/router';
import { METRICS_CONTENT_TYPE, metricsText } from '../../platform/metrics.js';

export function metricsRouter(): Router {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    ctx.type = METRICS_CONTENT_TYPE;
    ctx.body = await metricsText();
  });
  return router;
}
