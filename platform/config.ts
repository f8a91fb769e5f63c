// Reads and checks the environment once at start-up into a typed, frozen object (docs/configuration.md "Configuration").
// Bad configuration stops start-up with one line that names each bad variable, what it must be and
// what it was (`PORT: must be a whole number 1–65535, got "abc"`), worded as the API words refused
// fields (domain/field-errors.ts, which platform/ may not import: each rule states its own message); a secret's value is never shown (SECRET_VARIABLES).
import { z } from 'zod';

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `90s`, `5m`, `2h`, `1d`, `250ms` into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new Error(`not a duration: "${text}" (expected e.g. 30s, 5m, 2h)`);
  return Number(match[1]) * DURATION_UNITS_MS[match[2]];
}

const DURATION_RULE = 'must be a duration, e.g. 250ms, 30s, 5m, 2h or 1d';

const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: DURATION_RULE });
    return z.NEVER;
  }
});

/** A whole number in [min, max] (or at least min), one rule whatever check fails: the operator reads what to write. */
function wholeNumber(min: number, max?: number) {
  const error = max === undefined ? `must be a whole number, at least ${min}` : `must be a whole number ${min}–${max}`;
  const atLeast = z.number({ error }).int({ error }).min(min, { error });
  return digits(/^[0-9]+$/, error).pipe(max === undefined ? atLeast : atLeast.max(max, { error }));
}

/**
 * A number written out in decimal digits (`pattern`): not JavaScript's Number(), which reads an empty
 * or blank variable as 0 (WORKER_METRICS_PORT="" any free port, WORKER_MAX_CACHED_WORKFLOWS="" the cache off) and
 * `1e3` or `0x10` as numbers nobody meant.
 */
const digits = (pattern: RegExp, error: string) => z.string({ error }).regex(pattern, { error }).transform(Number);

/** Not empty (an empty variable is a mistake, not "unset"). */
const nonEmpty = z.string().min(1, { error: 'must not be empty' });

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
  } catch {
    ctx.addIssue({ code: 'custom', message: `must be a duration, e.g. 30d or 180d, or never` });
    return z.NEVER;
  }
  if (ms > RETENTION_WINDOW_MAX_DAYS * DURATION_UNITS_MS.d) {
    ctx.addIssue({ code: 'custom', message: `must be at most ${RETENTION_WINDOW_MAX_DAYS}d (100 years); never keeps forever` });
    return z.NEVER;
  }
  return ms;
});

const boolean = z.enum(['true', 'false', '1', '0'], { error: 'must be true, false, 1 or 0' }).transform((v) => v === 'true' || v === '1');

const URL_RULE = 'must be a URL, e.g. https://cards.example.com';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/**
 * The largest per-minute rate limit: windows are counted in an integer column (db/rate-limit.ts), and a
 * billion a minute is no limit at all; anything past Postgres's integer would fail every count.
 */
const RATE_LIMIT_MAX = 1_000_000_000;
/**
 * The longest webhook attempt: a delivery run waits up to 30 s for its throttle slot
 * (activities/webhook-delivery.ts MAX_THROTTLE_WAIT_MS) and then posts, inside an activity run of a
 * minute (workflows/delivery-options.ts); past that Temporal would run the same attempt again.
 */
const WEBHOOK_TIMEOUT_MAX_MS = 25_000;
/** The longest dashboard session: subtracted from now() in Postgres, and a session of years signs nobody out. */
const SESSION_MAX_DAYS = 365;
const sessionLifetime = (fallback: number) =>
  duration
    .default(fallback)
    .refine((ms) => ms > 0, 'must be more than 0')
    .refine((ms) => ms <= SESSION_MAX_DAYS * DURATION_UNITS_MS.d, `must be at most ${SESSION_MAX_DAYS}d`);
const ORIGIN_RULE = 'must be an origin, e.g. https://cards.example.com (no path, query or fragment)';
const CACHE_RULE = 'must be 0 (no cache) or a whole number of at least 2';
const RATIO_RULE = 'must be a number greater than 0 and at most 1';

const envSchema = z.object({
  /** The API's port. Not 0: a random port is never what an operator means (the base URLs name PORT). */
  PORT: wholeNumber(1, 65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().url({ error: 'must be a URL, e.g. postgres://user:password@host:5432/database' }).optional(),
  TEMPORAL_ADDRESS: nonEmpty.optional(),
  TEMPORAL_NAMESPACE: nonEmpty.default('default'),
  TEMPORAL_TASK_QUEUE: nonEmpty.default('card-delivery'),
  TEMPORAL_UI_URL: z.string().url({ error: URL_RULE }).optional(),
  // TLS and API key to Temporal (a frontend with mTLS, Temporal Cloud), under the names of Temporal's
  // own environment configuration; temporal/connection-options.ts reads the files.
  /** Connect over TLS (implied by any variable below). */
  TEMPORAL_TLS: boolean.optional(),
  /** The client certificate and its key (PEM) for mTLS: both or neither. */
  TEMPORAL_TLS_CLIENT_CERT_PATH: nonEmpty.optional(),
  TEMPORAL_TLS_CLIENT_KEY_PATH: nonEmpty.optional(),
  /** The CA (PEM) that signed the frontend's certificate, when the system's roots do not hold it. */
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: nonEmpty.optional(),
  /** The name the frontend's certificate must carry, when it is not the host of TEMPORAL_ADDRESS. */
  TEMPORAL_TLS_SERVER_NAME: nonEmpty.optional(),
  /** Sent as `Authorization: Bearer …` on every call (Temporal Cloud API keys); implies TLS. Never logged. */
  TEMPORAL_API_KEY: nonEmpty.optional(),
  RATE_LIMIT_PER_MINUTE: wholeNumber(1, RATE_LIMIT_MAX).default(1000),
  /**
   * Limits at or above this let each API process claim counted slots ahead of use (see
   * api/rate-limiter.ts): fewer database writes, at the cost of refusing up to ~1.5% early per
   * process. Below it every request waits for its own count, exact across processes.
   */
  RATE_LIMIT_LEASE_FROM: wholeNumber(1, RATE_LIMIT_MAX).default(10_000),
  /**
   * Requests without a valid API key (none, malformed, forged, revoked) are counted per client IP
   * in a window of their own, this many a minute; past it they get 429 before any key lookup.
   */
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: wholeNumber(1, RATE_LIMIT_MAX).default(100),
  /**
   * Behind a load balancer or reverse proxy: take the client IP from TRUST_PROXY_HEADER instead of
   * the socket (Koa's `app.proxy`). Leave false when clients reach the API directly, or any client
   * could choose its own address by sending the header.
   */
  TRUST_PROXY: boolean.default(false),
  /** The header the trusted proxy sets to the client's address. */
  TRUST_PROXY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'must be an HTTP header name (letters, digits and -)')
    .default('X-Forwarded-For'),
  /** How many proxies stand in front of the API: the client IP is that many entries from the header's end. */
  TRUST_PROXY_HOPS: wholeNumber(1, 10).default(1),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('1m,5m,30m,2h,8h')
    .transform((text, ctx) => {
      try {
        return text.split(',').map(parseDuration);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be durations separated by commas, e.g. 1m,5m,30m,2h,8h (units ms, s, m, h, d)' });
        return z.NEVER;
      }
    }),
  WEBHOOK_TIMEOUT_MS: wholeNumber(1, WEBHOOK_TIMEOUT_MAX_MS).default(5000),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean.default(false),
  /** Webhook endpoints an issuer may have, both modes together (docs/webhooks.md "Endpoints"). */
  WEBHOOK_MAX_ENDPOINTS_PER_ISSUER: wholeNumber(1, 1000).default(20),
  /** An endpoint that has failed every attempt for this long is disabled (docs/webhooks.md "Auto-disable"). */
  WEBHOOK_AUTO_DISABLE_AFTER: duration.default(5 * 86_400_000),
  /** At least a second: the refresh Schedule's interval, and whole seconds of a status answer's max-age derive from it. */
  PREDICTION_REFRESH_INTERVAL: duration.default(3_600_000).refine((ms) => ms >= 1000, 'must be at least 1s'),
  /**
   * A card not delivered this many business days (its destination's calendar) after its window's
   * max enters exception `overdue` and leaves the refresh (docs/states.md "Overdue"). At most a
   * year of business days: a larger value would mean "never", which hides lost cards.
   */
  OVERDUE_BUSINESS_DAYS: wholeNumber(1, 260).default(10),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  /**
   * `npm start` with nothing configured: the port of its demo webhook receiver on 127.0.0.1
   * (cli/demo-receiver.ts). Not 0: the demo endpoint's URL keeps it from one run to the next.
   */
  DEMO_WEBHOOK_PORT: wholeNumber(1, 65535).default(4100),
  /** `npm start` without TEMPORAL_ADDRESS: its Temporal dev server's gRPC and UI ports on 127.0.0.1 (cli/start.ts). */
  TEMPORAL_DEV_SERVER_PORT: wholeNumber(1, 65535).default(7233),
  TEMPORAL_DEV_SERVER_UI_PORT: wholeNumber(1, 65535).default(8233),
  /** The worker's own HTTP server: /metrics, /healthz, /readyz (0 = any free port, for tests). */
  WORKER_METRICS_PORT: wholeNumber(0, 65535).default(9464),
  /** On SIGTERM, how long the worker lets running activities finish before cancelling them. */
  WORKER_SHUTDOWN_GRACE: duration.default(10_000),
  // Worker tuning (docs/maintenance.md "Scaling and tuning"; measured in bench/webhook-latency).
  /** Workflows the worker keeps in memory (0 turns the cache and sticky queues off; 1 is not allowed by the SDK). */
  WORKER_MAX_CACHED_WORKFLOWS: digits(/^[0-9]+$/, CACHE_RULE)
    .pipe(z.number().refine((n) => n !== 1, CACHE_RULE))
    .default(1000),
  /** Workflow tasks the worker runs at once (at most WORKER_MAX_CACHED_WORKFLOWS when the cache is on). */
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: wholeNumber(2).default(100),
  /** Activities (webhook deliveries, refresh pages) the worker runs at once. */
  WORKER_MAX_CONCURRENT_ACTIVITIES: wholeNumber(1).default(200),
  /** Local activities (the projection write) the worker runs at once. */
  WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: wholeNumber(1).default(100),
  /** Concurrent workflow task polls, sticky and normal queue together (at least 2 with the cache on). */
  WORKER_WORKFLOW_TASK_POLLERS: wholeNumber(2).default(10),
  /** Concurrent activity task polls. */
  WORKER_ACTIVITY_TASK_POLLERS: wholeNumber(1).default(10),
  /** Share of the workflow task polls that go to the task queue shared by all workers rather than this worker's sticky queue. */
  WORKER_NONSTICKY_POLL_RATIO: digits(/^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/, RATIO_RULE)
    .pipe(z.number().gt(0, { error: RATIO_RULE }).max(1, { error: RATIO_RULE }))
    .default(0.2),
  /** How long a workflow task waits on this worker's sticky queue before any worker may take it with the full history. */
  WORKER_STICKY_QUEUE_TIMEOUT: duration.default(10_000),
  /** Threads that run workflow code (the SDK's workflowThreadPoolSize): replays after a restart or a cache miss run there. */
  WORKER_WORKFLOW_THREADS: wholeNumber(1, 16).default(1),
  /** Postgres connections each worker process may hold. */
  WORKER_DATABASE_POOL_MAX: wholeNumber(1, 1000).default(20),
  /** Postgres connections each API process may hold. */
  DATABASE_POOL_MAX: wholeNumber(1, 1000).default(10),
  /**
   * On SIGTERM, how long an API process keeps accepting new connections after /readyz turned 503,
   * so a load balancer sees it before the listener closes (in-flight requests always finish).
   */
  API_DRAIN_DELAY: duration.default(0),
  /** How long an API process may trust a cached API-key lookup; revocation takes effect within it. */
  API_KEY_CACHE_TTL_MS: wholeNumber(0, 5000).default(2000),
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
  DASHBOARD_BASE_URL: z.url({ error: URL_RULE }).optional(),
  /**
   * The origin of the cardholder's tracking links, `{PUBLIC_BASE_URL}/t/{token}` (docs/tracking-page.md "Links"). Unset:
   * the API's own http://localhost:PORT. Never taken from a request's Host header, so a link an
   * issuer e-mails cannot be pointed elsewhere by whoever made the API call.
   */
  PUBLIC_BASE_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .refine((text) => {
      // Only a URL reaches here whole (zod goes on past a failed check; that one names the problem).
      const url = URL.parse(text);
      return url === null || (url.pathname === '/' && !/[?#]/.test(text));
    }, ORIGIN_RULE)
    .optional(),
  /** Tracking page requests (GET and POST /t/…) per client IP a minute; past it a 429 page (the stylesheet does not count). */
  TRACKING_PAGE_RATE_PER_MINUTE: wholeNumber(1, RATE_LIMIT_MAX).default(60),
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
  RETENTION_BATCH_PAUSE: duration.default(500).refine((ms) => ms <= 30_000, 'must be at most 30s'),
  /** Inbound tracking-feed requests (POST /v1/inbound/{feed_id}) per feed a minute; past it 429 with Retry-After. */
  FEED_RATE_PER_MINUTE: wholeNumber(1, RATE_LIMIT_MAX).default(6000),
  /** A dashboard session ends after this long without a request… */
  DASHBOARD_SESSION_IDLE: sessionLifetime(30 * 60_000),
  /** …and this long after sign-in, however active. */
  DASHBOARD_SESSION_MAX: sessionLifetime(12 * 3_600_000),
});

export type Config = Readonly<z.infer<typeof envSchema>>;

/** Every variable the configuration reads (platform/config.ts; docs/configuration.md lists each). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** The dashboard's public base URL, without a trailing slash. */
export function dashboardBaseUrl(config: Config): string {
  return (config.DASHBOARD_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
}

/** The origin of tracking links, without a trailing slash. */
export function publicBaseUrl(config: Config): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
}

/** A variable's value may be a secret: its value is never shown in a message (it could reach a log). */
const SECRET_VARIABLES = new Set(['DATABASE_URL', 'TEMPORAL_API_KEY']);
/** Characters of a bad value shown at most. */
const VALUE_SHOWN = 100;

export interface ConfigProblem {
  variable: string;
  problem: string;
}

/**
 * A failure whose message is the one line an operator should read, nothing more (no stack): a bad
 * variable, a port another process holds. Entry points write it to stderr and exit 1 (exitOnStartupError).
 */
export class StartupError extends Error {}

/** Bad configuration: `invalid configuration: VARIABLE: problem, got "value"; …` on one line. */
export class ConfigError extends StartupError {
  readonly problems: readonly ConfigProblem[];
  constructor(problems: ConfigProblem | readonly ConfigProblem[], env: NodeJS.ProcessEnv = {}) {
    const list = Array.isArray(problems) ? (problems as readonly ConfigProblem[]) : [problems as ConfigProblem];
    super(`invalid configuration: ${list.map((p) => `${p.variable}: ${p.problem}${shownValue(p.variable, env[p.variable])}`).join('; ')}`);
    this.problems = list;
  }
}

/** `, got "abc"` (JSON-quoted: one line whatever it holds), or nothing for an unset variable; a secret is not shown. */
function shownValue(variable: string, value: string | undefined): string {
  if (value === undefined) return '';
  // A URL with user information (`https://user:password@host`) is treated as a secret too.
  if (SECRET_VARIABLES.has(variable) || (variable.endsWith('_URL') && value.includes('@'))) return ' (its value is not shown)';
  return `, got ${JSON.stringify(value.length > VALUE_SHOWN ? `${value.slice(0, VALUE_SHOWN)}…` : value)}`;
}

/**
 * How an entry point ends on a StartupError: its one line on stderr and exit code 1. Returns for any
 * other error, which the entry point reports its own way.
 */
export function exitOnStartupError(error: unknown): void {
  if (!(error instanceof StartupError)) return;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => ({ variable: issue.path.map(String).join('.'), problem: issue.message })),
      env,
    );
  }
  const config = parsed.data;
  if (config.WORKER_MAX_CACHED_WORKFLOWS > 0 && config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS > config.WORKER_MAX_CACHED_WORKFLOWS) {
    throw new ConfigError(
      {
        variable: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
        problem: `must not exceed WORKER_MAX_CACHED_WORKFLOWS (${config.WORKER_MAX_CACHED_WORKFLOWS})`,
      },
      env,
    );
  }
  const [cert, key] = [config.TEMPORAL_TLS_CLIENT_CERT_PATH, config.TEMPORAL_TLS_CLIENT_KEY_PATH];
  if (Boolean(cert) !== Boolean(key)) {
    const [missing, given] = cert
      ? ['TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_CERT_PATH']
      : ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH'];
    throw new ConfigError({ variable: missing, problem: `is required with ${given} (mTLS needs the certificate and its key)` }, env);
  }
  if (config.TEMPORAL_TLS === false && temporalTlsImplied(config)) {
    throw new ConfigError(
      { variable: 'TEMPORAL_TLS', problem: `must not be false when ${temporalTlsImplied(config)} is set (it needs TLS)` },
      env,
    );
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
