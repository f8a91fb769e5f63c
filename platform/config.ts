// Reads and checks the environment once at start-up into a typed, frozen object (docs/configuration.md "Configuration").
// Bad configuration stops start-up with a message that names the variable.
import { z } from 'zod';

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `90s`, `5m`, `2h`, `1d`, `250ms` into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new Error(`not a duration: "${text}" (expected e.g. 30s, 5m, 2h)`);
  return Number(match[1]) * DURATION_UNITS_MS[match[2]];
}

const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/**
 * The longest retention window: the sweep subtracts a window from now() in Postgres, and one of
 * about 27,000 years or more ends before its earliest timestamp ("timestamp out of range"), so every
 * daily sweep would fail; longer than a century means forever, which `never` says.
 */
const RETENTION_WINDOW_MAX_DAYS = 36_500;

/** A retention window (docs/privacy.md "What is kept, and for how long"): a duration, or `never` (null: kept forever). */
const retentionWindow = z.string().transform((text, ctx): number | null => {
  if (text.trim() === 'never') return null;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `${(error as Error).message} or never` });
    return z.NEVER;
  }
  if (ms > RETENTION_WINDOW_MAX_DAYS * DURATION_UNITS_MS.d) {
    ctx.addIssue({ code: 'custom', message: `at most ${RETENTION_WINDOW_MAX_DAYS}d (100 years), got "${text}"; never keeps forever` });
    return z.NEVER;
  }
  return ms;
});

const boolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().url().optional(),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('card-delivery'),
  TEMPORAL_UI_URL: z.string().url().optional(),
  // TLS and API key to Temporal (a frontend with mTLS, Temporal Cloud), under the names of Temporal's
  // own environment configuration; temporal/connection-options.ts reads the files.
  /** Connect over TLS (implied by any variable below). */
  TEMPORAL_TLS: boolean.optional(),
  /** The client certificate and its key (PEM) for mTLS: both or neither. */
  TEMPORAL_TLS_CLIENT_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_CLIENT_KEY_PATH: z.string().min(1).optional(),
  /** The CA (PEM) that signed the frontend's certificate, when the system's roots do not hold it. */
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: z.string().min(1).optional(),
  /** The name the frontend's certificate must carry, when it is not the host of TEMPORAL_ADDRESS. */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** Sent as `Authorization: Bearer …` on every call (Temporal Cloud API keys); implies TLS. Never logged. */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(1000),
  /**
   * Limits at or above this let each API process claim counted slots ahead of use (see
   * api/rate-limiter.ts): fewer database writes, at the cost of refusing up to ~1.5% early per
   * process. Below it every request waits for its own count, exact across processes.
   */
  RATE_LIMIT_LEASE_FROM: z.coerce.number().int().positive().default(10_000),
  /**
   * Requests without a valid API key (none, malformed, forged, revoked) are counted per client IP
   * in a window of their own, this many a minute; past it they get 429 before any key lookup.
   */
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: z.coerce.number().int().positive().default(100),
  /**
   * Behind a load balancer or reverse proxy: take the client IP from TRUST_PROXY_HEADER instead of
   * the socket (Koa's `app.proxy`). Leave false when clients reach the API directly, or any client
   * could choose its own address by sending the header.
   */
  TRUST_PROXY: boolean.default(false),
  /** The header the trusted proxy sets to the client's address. */
  TRUST_PROXY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'an HTTP header name')
    .default('X-Forwarded-For'),
  /** How many proxies stand in front of the API: the client IP is that many entries from the header's end. */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(1),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('1m,5m,30m,2h,8h')
    .transform((text, ctx) => {
      try {
        return text.split(',').map(parseDuration);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean.default(false),
  /** Webhook endpoints an issuer may have, both modes together (docs/webhooks.md "Endpoints"). */
  WEBHOOK_MAX_ENDPOINTS_PER_ISSUER: z.coerce.number().int().min(1).max(1000).default(20),
  /** An endpoint that has failed every attempt for this long is disabled (docs/webhooks.md "Auto-disable"). */
  WEBHOOK_AUTO_DISABLE_AFTER: duration.default(5 * 86_400_000),
  PREDICTION_REFRESH_INTERVAL: duration.default(3_600_000),
  /**
   * A card not delivered this many business days (its destination's calendar) after its window's
   * max enters exception `overdue` and leaves the refresh (docs/states.md "Overdue"). At most a
   * year of business days: a larger value would mean "never", which hides lost cards.
   */
  OVERDUE_BUSINESS_DAYS: z.coerce.number().int().min(1).max(260).default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * `npm start` with nothing configured: the port of its demo webhook receiver on 127.0.0.1
   * (cli/demo-receiver.ts). Not 0: the demo endpoint's URL keeps it from one run to the next.
   */
  DEMO_WEBHOOK_PORT: z.coerce.number().int().min(1).max(65535).default(4100),
  /** The worker's own HTTP server: /metrics, /healthz, /readyz (0 = any free port, for tests). */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** On SIGTERM, how long the worker lets running activities finish before cancelling them. */
  WORKER_SHUTDOWN_GRACE: duration.default(10_000),
  // Worker tuning (docs/maintenance.md "Scaling and tuning"; measured in bench/webhook-latency).
  /** Workflows the worker keeps in memory (0 turns the cache and sticky queues off; 1 is not allowed by the SDK). */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce
    .number()
    .int()
    .min(0)
    .refine((n) => n !== 1, 'must be 0 (no cache) or at least 2')
    .default(1000),
  /** Workflow tasks the worker runs at once (at most WORKER_MAX_CACHED_WORKFLOWS when the cache is on). */
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().min(2).default(100),
  /** Activities (webhook deliveries, refresh pages) the worker runs at once. */
  WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).default(200),
  /** Local activities (the projection write) the worker runs at once. */
  WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: z.coerce.number().int().min(1).default(100),
  /** Concurrent workflow task polls, sticky and normal queue together (at least 2 with the cache on). */
  WORKER_WORKFLOW_TASK_POLLERS: z.coerce.number().int().min(2).default(10),
  /** Concurrent activity task polls. */
  WORKER_ACTIVITY_TASK_POLLERS: z.coerce.number().int().min(1).default(10),
  /** Share of the workflow task polls that go to the task queue shared by all workers rather than this worker's sticky queue. */
  WORKER_NONSTICKY_POLL_RATIO: z.coerce.number().gt(0).max(1).default(0.2),
  /** How long a workflow task waits on this worker's sticky queue before any worker may take it with the full history. */
  WORKER_STICKY_QUEUE_TIMEOUT: duration.default(10_000),
  /** Threads that run workflow code (the SDK's workflowThreadPoolSize): replays after a restart or a cache miss run there. */
  WORKER_WORKFLOW_THREADS: z.coerce.number().int().min(1).max(16).default(1),
  /** Postgres connections each worker process may hold. */
  WORKER_DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(20),
  /** Postgres connections each API process may hold. */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  /**
   * On SIGTERM, how long an API process keeps accepting new connections after /readyz turned 503,
   * so a load balancer sees it before the listener closes (in-flight requests always finish).
   */
  API_DRAIN_DELAY: duration.default(0),
  /** How long an API process may trust a cached API-key lookup; revocation takes effect within it. */
  API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(5000).default(2000),
  /** How long a delivered dispatch's workflow stays open for late carrier events before completing. */
  DELIVERED_RETENTION: duration.default(7 * 86_400_000),
  /**
   * How long a dispatch resting in exception (lost, returned, overdue, …) with no carrier event stays
   * open before completing; a later event starts it again (docs/states.md "Closed dispatches").
   */
  EXCEPTION_RETENTION: duration.default(30 * 86_400_000),
  /**
   * Where browsers reach the dashboard (set-password links, Secure cookies when https). Unset: the
   * API's own http://localhost:PORT.
   */
  DASHBOARD_BASE_URL: z.url().optional(),
  /**
   * The origin of the cardholder's tracking links, `{PUBLIC_BASE_URL}/t/{token}` (docs/tracking-page.md "Links"). Unset:
   * the API's own http://localhost:PORT. Never taken from a request's Host header, so a link an
   * issuer e-mails cannot be pointed elsewhere by whoever made the API call.
   */
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Tracking page requests (GET and POST /t/…) per client IP a minute; past it a 429 page (the stylesheet does not count). */
  TRACKING_PAGE_RATE_PER_MINUTE: z.coerce.number().int().positive().default(60),
  /**
   * Retention (docs/privacy.md): a completed dispatch is erased this long after its last change (its
   * last carrier event), a settled webhook event's payload cleared, a transit history row deleted.
   */
  RETENTION_DISPATCH: retentionWindow.default(180 * 86_400_000),
  RETENTION_WEBHOOK_PAYLOAD: retentionWindow.default(30 * 86_400_000),
  RETENTION_TRANSIT_HISTORY: retentionWindow.default(800 * 86_400_000),
  /**
   * The retention sweep's pause between two batches (one batch at a time), so that live traffic has
   * the database most of the time (bench/retention). At most 30 s: the sweep heartbeats once a batch
   * and its heartbeat timeout is a minute.
   */
  RETENTION_BATCH_PAUSE: duration.default(500).refine((ms) => ms <= 30_000, 'at most 30s'),
  /** Inbound tracking-feed requests (POST /v1/inbound/{feed_id}) per feed a minute; past it 429 with Retry-After. */
  FEED_RATE_PER_MINUTE: z.coerce.number().int().positive().default(6000),
  /** A dashboard session ends after this long without a request… */
  DASHBOARD_SESSION_IDLE: duration.default(30 * 60_000),
  /** …and this long after sign-in, however active. */
  DASHBOARD_SESSION_MAX: duration.default(12 * 3_600_000),
});

export type Config = Readonly<z.infer<typeof envSchema>>;

/** The dashboard's public base URL, without a trailing slash. */
export function dashboardBaseUrl(config: Config): string {
  return (config.DASHBOARD_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
}

/** The origin of tracking links, without a trailing slash. */
export function publicBaseUrl(config: Config): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = parsed.data;
  if (config.WORKER_MAX_CACHED_WORKFLOWS > 0 && config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS > config.WORKER_MAX_CACHED_WORKFLOWS) {
    throw new ConfigError(
      `invalid configuration:\n  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: must not exceed WORKER_MAX_CACHED_WORKFLOWS (${config.WORKER_MAX_CACHED_WORKFLOWS})`,
    );
  }
  const [cert, key] = [config.TEMPORAL_TLS_CLIENT_CERT_PATH, config.TEMPORAL_TLS_CLIENT_KEY_PATH];
  if (Boolean(cert) !== Boolean(key)) {
    const [missing, given] = cert
      ? ['TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_CERT_PATH']
      : ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH'];
    throw new ConfigError(`invalid configuration:\n  ${missing}: required with ${given} (mTLS needs the certificate and its key)`);
  }
  if (config.TEMPORAL_TLS === false && temporalTlsImplied(config)) {
    throw new ConfigError(`invalid configuration:\n  TEMPORAL_TLS: false, yet ${temporalTlsImplied(config)} is set (it needs TLS)`);
  }
  return Object.freeze(config);
}

/** The first TLS or API-key variable that is set (each makes the Temporal connection use TLS). */
export function temporalTlsImplied(config: Pick<Config, TemporalTlsVariable>): TemporalTlsVariable | undefined {
  return TEMPORAL_TLS_VARIABLES.find((name) => config[name] !== undefined);
}

const TEMPORAL_TLS_VARIABLES = [
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_API_KEY',
] as const;
type TemporalTlsVariable = (typeof TEMPORAL_TLS_VARIABLES)[number];
