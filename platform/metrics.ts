// The service's Prometheus metrics (docs/monitoring.md "Metrics"): one prom-client registry per
// process and every series the service itself records, served as text by `GET /metrics` on the API
// port (api/app.ts) and by the worker's metrics server (worker/metrics-server.ts). `npm start` runs
// the API and the worker in one process, so both endpoints serve this one registry there.
// Labels are bounded by construction: HTTP routes are the router's path templates (never a raw URL,
// so no id becomes a label), and every other label is one of a fixed set of values.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
// The event-loop lag histogram samples with a 100 ms timer rather than prom-client's 10 ms: the
// 10 ms timer woke each process 100 times a second, 2.8 ms of CPU per second of an idle process on
// the 2-core bench machine against 0.6 ms (bench/capacity README.md); a lag worth alerting on is
// far above 100 ms and is still measured, with 100 ms granularity.
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });

const registers = [registry];
/** Seconds, from a fast status read (a few ms) to a request that hits a timeout. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequestDuration = new Histogram({
  name: 'cds_http_request_duration_seconds',
  help: 'HTTP requests answered by the API, by method, route template and status, with their latency (the status fast path included)',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: HTTP_BUCKETS,
  registers,
});

/** Set by each API readiness check (`/readyz`, probed every few seconds): 1 reachable, 0 not. */
export const dependencyUp = new Gauge({
  name: 'cds_dependency_up',
  help: "Whether the API's last readiness check reached each dependency (database, temporal): 1 yes, 0 no",
  labelNames: ['dependency'] as const,
  registers,
});

export const rateLimitRefusals = new Counter({
  name: 'cds_rate_limit_refusals_total',
  help: 'Requests refused with 429, by the window they counted against: key (a valid API key) or ip (no valid key: the client IP window)',
  labelNames: ['kind'] as const,
  registers,
});

export const carrierEvents = new Counter({
  name: 'cds_carrier_events_total',
  help: 'Carrier events folded into a dispatch, by the effect recorded in the carrier event log (applied, stale, backward, ...)',
  labelNames: ['effect'] as const,
  registers,
});

export const webhookAttempts = new Counter({
  name: 'cds_webhook_attempts_total',
  help: 'Webhook delivery attempts (HTTP POSTs), by outcome: success (2xx), http_error (another status) or network_error (refused URL, connection, timeout)',
  labelNames: ['outcome'] as const,
  registers,
});

export const webhookAttemptDuration = new Histogram({
  name: 'cds_webhook_attempt_duration_seconds',
  help: 'Duration of webhook delivery attempts, by outcome',
  labelNames: ['outcome'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers,
});

export const webhookConnectionsOpened = new Counter({
  name: 'cds_webhook_connections_opened_total',
  help: 'Connections opened to webhook receivers (over https, each one a TLS handshake); attempts reuse a kept connection to the same checked address',
  labelNames: ['scheme'] as const,
  registers,
});

export const webhookUndeliverable = new Counter({
  name: 'cds_webhook_undeliverable_total',
  help: 'Webhook deliveries that became undeliverable (their last scheduled attempt failed)',
  registers,
});

export const predictionRefreshDuration = new Histogram({
  name: 'cds_prediction_refresh_duration_seconds',
  help: 'Duration of the bulk prediction refresh activity (one run of the Schedule, or one retried attempt)',
  buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800, 3600],
  registers,
});

export const predictionRefreshSignalled = new Counter({
  name: 'cds_prediction_refresh_dispatches_signalled_total',
  help: 'Dispatches the prediction refresh signalled (their window or confidence changed, or they became overdue)',
  registers,
});

/** What the retention sweep removes (docs/privacy.md "What is kept, and for how long"): a fixed set, so a bounded label. */
export const RETENTION_KINDS = [
  'dispatch',
  'webhook_payload',
  'transit_history',
  'tracking_link',
  'feed_checkpoint',
  'feed_count',
] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

export const retentionErased = new Counter({
  name: 'cds_retention_erased_total',
  help: "What the retention sweep removed, by kind: dispatch (erased), webhook_payload (cleared), transit_history (rows deleted), tracking_link (deleted), feed_checkpoint (a feed's unmatched checkpoint), feed_count (a feed's hourly count)",
  labelNames: ['kind'] as const,
  registers,
});

/** What a tracking page request was answered with (docs/tracking-page.md "The page"): never the token, so a bounded label. */
/** DESIGN §9's outcomes: an erased dispatch's link (a 404 page of its own) counts as `not_found`. */
export const TRACKING_PAGE_OUTCOMES = ['ok', 'gate', 'not_found', 'gone', 'limited'] as const;
export type TrackingPageOutcome = (typeof TRACKING_PAGE_OUTCOMES)[number];

export const trackingPageViews = new Counter({
  name: 'cds_tracking_page_views_total',
  help: "Requests for the cardholder's tracking page (/t/…), by outcome: ok (the page), gate (the postal-code form), not_found (an unknown token, or a link of an erased dispatch), gone (revoked or expired), limited (429)",
  labelNames: ['outcome'] as const,
  registers,
});

/** How an inbound tracking-feed request was answered (docs/tracking-feeds.md "Metrics"). */
export const FEED_REQUEST_OUTCOMES = ['ok', 'unauthorized', 'bad_body', 'not_found', 'limited'] as const;
export type FeedRequestOutcome = (typeof FEED_REQUEST_OUTCOMES)[number];

export const feedRequests = new Counter({
  name: 'cds_feed_requests_total',
  help: 'Inbound tracking-feed requests (POST /v1/inbound/{feed_id}), by provider (unknown for an unknown feed) and outcome: ok, unauthorized, bad_body, not_found, limited',
  labelNames: ['provider', 'outcome'] as const,
  registers,
});

export const feedCheckpoints = new Counter({
  name: 'cds_feed_checkpoints_total',
  help: 'Checkpoints of inbound tracking-feed requests answered 200, by provider and result: applied, duplicate, unmatched, ignored (also the kept checkpoints a registration lists as ignored)',
  labelNames: ['provider', 'result'] as const,
  registers,
});

/** Bands of how long pending webhook deliveries have waited since they were created. */
export const PENDING_AGE_BANDS = ['under_1m', '1m_to_1h', '1h_to_1d', 'over_1d'] as const;
export type PendingAgeBand = (typeof PENDING_AGE_BANDS)[number];

/** Scrapes within this long of the last query share its answer: several scrapers cost one query. */
const PENDING_CACHE_MS = 2_000;
let pendingGauge: Gauge<'age'> | undefined;

/**
 * `cds_webhook_deliveries_pending{age}`, read on scrape by `load` (one query, db/delivery-backlog.ts).
 * Once per process: a second call (the API and the worker of `npm start`) keeps the first loader.
 */
export function observePendingDeliveries(load: () => Promise<Record<PendingAgeBand, number>>): void {
  if (pendingGauge) return;
  let last: { at: number; counts: Promise<Record<PendingAgeBand, number>> } | undefined;
  pendingGauge = new Gauge({
    name: 'cds_webhook_deliveries_pending',
    help: 'Webhook deliveries still pending (not yet delivered, undeliverable or skipped), by how long ago they were created',
    labelNames: ['age'] as const,
    registers,
    async collect() {
      if (!last || Date.now() - last.at > PENDING_CACHE_MS) last = { at: Date.now(), counts: load() };
      const current = last;
      try {
        const counts = await current.counts;
        for (const age of PENDING_AGE_BANDS) this.set({ age }, counts[age]);
      } catch {
        // The database is unreachable: no value rather than a stale one, and the next scrape asks again.
        if (last === current) last = undefined;
        this.reset();
      }
    },
  });
}

/** The Prometheus text of this process's registry, followed by `extra` (the Temporal SDK's own metrics). */
export async function metricsText(extra = ''): Promise<string> {
  const own = await registry.metrics();
  return extra ? `${own.trimEnd()}\n${extra}` : own;
}

export const METRICS_CONTENT_TYPE = registry.contentType;
