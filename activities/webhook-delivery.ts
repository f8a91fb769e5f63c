// Step 7 of a carrier event's path (docs/architecture.md "The path of one carrier event"): the POST
// of each webhook event a change fired, started by the dispatch workflow (workflows/dispatch.ts,
// step 3) with the deliveries activities/projection.ts (step 5) wrote; its SQL is db/webhooks.ts
// (step 8).
// The webhook delivery activities (docs/webhooks.md "Delivery and retry schedule"): deliverWebhooks
// makes the first attempt of each delivery of a change, deliverWebhook drives one delivery on
// through its retries (and a replay's or the reconciler's). Each attempt re-checks the URL (SSRF
// guard), POSTs the stored body bytes with fresh signatures, and records itself in
// delivery_attempts — Temporal's history keeps only the last attempt. The retry schedule is the
// activities': a first attempt that failed is answered with the schedule's delay (the workflow
// waits it), a later one throws a retryable ApplicationFailure whose nextRetryDelay is the
// schedule's entry; after the last retry the delivery is marked undeliverable and the activity
// RETURNS, so the workflow sees a settled delivery rather than a failure.
//
// The attempt number is the delivery's recorded attempts + 1, not Temporal's attempt counter: a run
// that never got to record its attempt (a worker killed mid-POST, the database down) is retried by
// Temporal's policy and sends the same number again, so the numbers 1..6 and the schedule count
// HTTP attempts only. The workflow's retry policy must therefore be unlimited, with a
// startToCloseTimeout comfortably above WEBHOOK_TIMEOUT_MS (it is also how fast a crash is noticed).
// That policy must not bring a retry forward: nothing after an attempt's record fails the run, and
// a retried deliverWebhooks answers a delivery it already attempted with the schedule's delay left.
//
// One driver per pending delivery (docs/webhooks.md): each run first claims the delivery
// (db/webhooks.ts claimDelivery) as the driver it is given (the dispatch's `dispatch:<id>`, a
// replay's or the reconciler's token; `<workflowId>/<activityId>` when none), unless the change's
// write handed it over already claimed (activities/handed-deliveries.ts). A run that finds the
// delivery driven by someone else (a replay took over its waiting retry, or the reconciler re-drove
// it) returns `superseded` without sending, so the dispatch workflow completes; a throttled run
// checks again after its wait. A replay that takes over an attempt in flight numbers its own after
// it (the claim marks the attempt a run sends), and the taken-over run's record then logs its
// attempt without moving the delivery. The reconciler (activities/redelivery.ts, run by a Temporal
// Schedule) re-drives pending deliveries whose driver is overdue: see docs/webhooks.md.
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Pool } from '../db/pool.js';
import { pauseFailingEndpoint, recordEndpointFailure, type EndpointAutoDisabled } from '../db/endpoint-health.js';
import { claimSendSlot, deferDelivery } from '../db/endpoint-throttle.js';
import { claimDelivery, holdForSending, markDeliverySkipped, recordDeliveryAttempt, type DeliveryToSend } from '../db/webhooks.js';
import { signedHeaders } from '../domain/signing.js';
import type { Config } from '../platform/config.js';
import { webhookAttemptDuration, webhookAttempts, webhookUndeliverable } from '../platform/metrics.js';
import { AttemptFailed, checkWebhookUrl, postToCheckedAddress, type HostLookup } from '../platform/ssrf-guard.js';
import { withTraceContext } from '../platform/tracing.js';
import { startRedelivery } from '../temporal/client.js';
import type { HandedDeliveries } from './handed-deliveries.js';
import type { DeliveryKey } from '../temporal/contract.js';

export interface DeliverWebhookInput {
  eventId: string;
  endpointId: string;
  /**
   * A redelivery's token. With `takeOver` (a replay) the run takes the delivery from any other
   * driver; without it (the reconciler, which claimed the delivery already) it drives only a
   * delivery nobody else holds. Absent: the run's own identity, `<workflowId>/<activityId>`.
   */
  driver?: string;
  takeOver?: boolean;
}

/** What one attempt left: settled, or a retry to make after `delayMs` (docs/webhooks.md "Delivery and retry schedule"). */
export type AttemptResult = DeliverWebhookResult | { outcome: 'retry'; attempts: number; delayMs: number; type: string; message: string };

export interface DeliverWebhookResult {
  /** superseded: another driver holds the delivery (a replay or the reconciler); nothing was sent. */
  outcome: 'delivered' | 'undeliverable' | 'skipped' | 'superseded';
  /** The attempt number this run ended on (1-based, as sent in X-Service-Delivery-Attempt). */
  attempts: number;
}

/** Well inside the workflow's heartbeatTimeout for deliverWebhook (10 s). */
const HEARTBEAT_EVERY_MS = 2000;

/**
 * The longest a run waits for its throttle slot (docs/webhooks.md "Throttle"), heartbeating: with
 * the attempt's WEBHOOK_TIMEOUT_MS it stays well inside the activity's startToCloseTimeout (1 min).
 * A slot further away is not claimed: the run ends with a retryable `WebhookThrottled` failure whose
 * nextRetryDelay brings it back about when the backlog ahead of it is down to this wait, so the
 * durable wait is Temporal's retry timer (no workflow change) and no attempt is recorded for it.
 */
export const MAX_THROTTLE_WAIT_MS = 30_000;

type DeliveryConfig = Pick<
  Config,
  'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS' | 'WEBHOOK_AUTO_DISABLE_AFTER'
>;

export function createWebhookDeliveryActivities(deps: {
  pool: Pool;
  config: DeliveryConfig;
  temporal?: Client;
  now?: () => Date;
  handed?: HandedDeliveries;
  /** Resolves endpoint host names: node:dns's lookup unless a test stands in for DNS. */
  lookup?: HostLookup;
  /**
   * `npm start` only (cli/start.ts): the one loopback origin an endpoint may reach although private
   * networks are refused, by endpoint id (the demo endpoint and its receiver in the same process);
   * undefined for every other endpoint. Never from the configuration, the API or the dashboard.
   */
  loopbackOriginFor?: (endpointId: string) => string | undefined;
}) {
  const now = deps.now ?? (() => new Date());
  const schedule = deps.config.WEBHOOK_RETRY_SCHEDULE;

  /** After a failed attempt: the endpoint's failing streak, and whether it has failed long enough to pause it (then it is paused). */
  async function judgeEndpointHealth(endpointId: string, at: Date, clock: Date): Promise<EndpointAutoDisabled | undefined> {
    const streak = await recordEndpointFailure(deps.pool, { endpointId, at, clock });
    if (!streak || streak.paused || clock.getTime() - streak.since.getTime() < deps.config.WEBHOOK_AUTO_DISABLE_AFTER) return undefined;
    return pauseFailingEndpoint(deps.pool, { endpointId, streak, disabledAt: at });
  }

  /**
   * deliverWebhooks only: how long before the claimed delivery's next attempt is due (0: send now).
   * A change's deliveries are new when its activity is first scheduled, so one that has a recorded
   * attempt here was attempted by an earlier run of this activity, which failed afterwards (a
   * sibling's error, its worker gone) and was brought back by Temporal's policy within seconds: the
   * attempt after it waits for the schedule's delay (spec Events rule 4), measured from its start.
   */
  function notDueForMs(delivery: DeliveryToSend): number {
    const delayMs = schedule[delivery.attempts - 1];
    const last = delivery.lastAttemptAt?.getTime();
    if (delivery.state !== 'pending' || delayMs === undefined || last === undefined) return 0;
    return Math.max(0, Math.ceil(last + delayMs - now().getTime()));
  }

  /**
   * One attempt of one delivery under `driver`: settled (delivered, undeliverable, skipped,
   * superseded), or `retry` after `delayMs` (a failed attempt with retries left, or a throttled one).
   */
  async function attemptDelivery(input: DeliverWebhookInput, driver: string, firstAttempts = false): Promise<AttemptResult> {
    const { eventId, endpointId } = input;
    const info = Context.current().info;
    const delivery =
      (input.takeOver ? undefined : deps.handed?.take(eventId, endpointId, driver)) ??
      (await claimDelivery(deps.pool, eventId, endpointId, {
        driver,
        takeOver: input.takeOver === true,
        lastAttempt: schedule.length + 1,
      }));
    if (!delivery) {
      log.warn('webhook delivery not found', { eventId, endpointId });
      return { outcome: 'skipped', attempts: 0 };
    }
    if (delivery === 'superseded') {
      log.info('webhook delivery superseded: another driver holds it', { eventId, endpointId, driver });
      return { outcome: 'superseded', attempts: 0 };
    }
    const attempt = delivery.attempts + 1;
    const run = info.attempt;
    if (run > attempt) log.info('webhook delivery resumed after an unrecorded run', { eventId, endpointId, attempt, run });
    // A run that already settled (its result was lost with a crashed worker) does not send again.
    if (delivery.state === 'delivered' || delivery.state === 'undeliverable' || delivery.state === 'skipped') {
      return { outcome: delivery.state, attempts: delivery.attempts };
    }
    // A change's run retried after it recorded a failed attempt waits for that attempt's delay,
    // sending nothing; the claim's mark of the attempt it meant to send goes with the deferral.
    const notDueMs = firstAttempts ? notDueForMs(delivery) : 0;
    if (notDueMs > 0) {
      await deferDelivery(deps.pool, eventId, endpointId, driver, notDueMs);
      log.info('webhook retry not due yet: the run waits', { eventId, endpointId, attempt, delayMs: notDueMs });
      return {
        outcome: 'retry',
        attempts: delivery.attempts,
        delayMs: notDueMs,
        type: 'WebhookRetryNotDue',
        message: `webhook attempt ${attempt} is due in ${notDueMs} ms, the schedule's delay after attempt ${delivery.attempts}`,
      };
    }
    // A paused endpoint's pending retries stop here, at their next attempt (docs/dashboard.md "Dashboard").
    const skipReason = delivery.payloadExpired
      ? 'payload expired'
      : delivery.endpoint.disabled
        ? 'endpoint removed'
        : delivery.endpoint.paused
          ? delivery.endpoint.pausedReason === 'failing'
            ? 'endpoint disabled: failing'
            : 'endpoint disabled'
          : !delivery.endpoint.events.includes(delivery.eventType)
            ? `endpoint no longer subscribed to ${delivery.eventType}`
            : undefined;
    if (skipReason) {
      await markDeliverySkipped(deps.pool, eventId, endpointId, skipReason);
      log.info('webhook delivery skipped', { eventId, endpointId, reason: skipReason });
      return { outcome: 'skipped', attempts: delivery.attempts };
    }

    const context = Context.current();
    // The endpoint's rate_limit, shared by every worker through its row of send slots: waiting is
    // not an attempt (the attempt number, the log and the retry schedule do not see it).
    if (delivery.endpoint.rateLimit !== null) {
      const slot = await claimSendSlot(deps.pool, endpointId, delivery.endpoint.rateLimit, MAX_THROTTLE_WAIT_MS);
      if (!slot.granted) {
        const delayMs = Math.max(1000, Math.round(slot.waitMs - MAX_THROTTLE_WAIT_MS / 2 + Math.random() * 1000));
        await deferDelivery(deps.pool, eventId, endpointId, driver, delayMs);
        log.info('webhook delivery throttled', { eventId, endpointId, attempt, delayMs });
        return {
          outcome: 'retry',
          attempts: delivery.attempts,
          delayMs,
          type: 'WebhookThrottled',
          message: `endpoint ${endpointId} is at its rate_limit; attempt ${attempt} waits ${delayMs} ms`,
        };
      }
      if (slot.waitMs > 0) {
        const beat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
        try {
          await context.sleep(slot.waitMs);
        } finally {
          clearInterval(beat);
        }
      }
      // The wait may have been long: a replay may have taken the delivery over (it sends this number
      // itself), or the dispatch's erasure been requested; only a run that still holds it sends, and
      // it marks its attempt sending as an unthrottled claim does (db/webhooks.ts claimDelivery).
      const held = await holdForSending(deps.pool, { eventId, endpointId, driver, attempt });
      if (held === undefined) {
        log.info('webhook delivery gone during its throttle wait', { eventId, endpointId });
        return { outcome: 'skipped', attempts: delivery.attempts };
      }
      if (held === 'superseded') {
        log.info('webhook delivery taken over during its throttle wait', { eventId, endpointId, driver });
        return { outcome: 'superseded', attempts: delivery.attempts };
      }
    }

    const startedAt = now();
    const started = performance.now();
    // Only a slow attempt heartbeats (a fast one costs no extra call): a worker that dies mid-POST
    // is noticed by the heartbeat timeout, seconds later, instead of at the start-to-close limit.
    const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
    let statusCode: number | undefined;
    let responseHead: Buffer | undefined;
    let error: string | undefined;
    let requestHeaders: Record<string, string> | undefined;
    try {
      // WEBHOOK_TIMEOUT_MS bounds the whole attempt: resolving the host, then connecting, sending and
      // reading the status and the body's first bytes in what is left of it.
      const limitMs = deps.config.WEBHOOK_TIMEOUT_MS;
      const checked = await checkWebhookUrl(delivery.endpoint.url, {
        allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
        timeoutMs: limitMs,
        lookup: deps.lookup,
        loopbackOrigin: deps.loopbackOriginFor?.(endpointId),
      });
      const headers = signedHeaders({ eventId, attempt, body: delivery.body, secrets: delivery.endpoint.secrets, now: startedAt });
      requestHeaders = headers;
      const timeoutMs = Math.max(1, limitMs - (performance.now() - started));
      // The endpoint's custom headers go out with the signed ones (which win: their names are reserved)
      // but are not in requestHeaders, which the delivery log records and shows.
      // With tracing on, the attempt's W3C `traceparent` too (platform/tracing.ts); not recorded either.
      const sent = withTraceContext({ ...delivery.endpoint.headers, ...headers });
      const response = await postToCheckedAddress(checked, { headers: sent, body: delivery.body, timeoutMs, limitMs });
      statusCode = response.statusCode;
      responseHead = response.head;
      if (statusCode >= 300 && statusCode <= 399) error = notFollowed(statusCode, response.location);
      else if (statusCode < 200 || statusCode > 299) error = `HTTP ${statusCode}`;
    } catch (failure) {
      error = (failure as Error).message || String(failure);
      // A status that came before the failure (a 500 whose connection was then reset) stays in the log.
      if (failure instanceof AttemptFailed) statusCode = failure.statusCode;
    } finally {
      clearInterval(heartbeat);
    }
    const durationMs = performance.now() - started;
    const delivered = error === undefined;
    // A 2xx whose answer then broke off is a network error, not an HTTP one.
    const outcome = delivered ? 'success' : statusCode === undefined || (statusCode >= 200 && statusCode <= 299) ? 'network_error' : 'http_error'; // prettier-ignore
    webhookAttempts.inc({ outcome });
    webhookAttemptDuration.observe({ outcome }, durationMs / 1000);
    const retriesLeft = attempt <= schedule.length;
    const state = delivered ? 'delivered' : retriesLeft ? 'pending' : 'undeliverable';
    const stillDriving = await recordDeliveryAttempt(deps.pool, {
      eventId,
      endpointId,
      attempt,
      startedAt,
      durationMs,
      statusCode,
      error,
      responseHead,
      requestHeaders,
      state,
      driver,
      retryDelayMs: state === 'pending' ? schedule[attempt - 1] : 0,
    });
    // Endpoint health (docs/webhooks.md "Auto-disable"): failing every attempt for WEBHOOK_AUTO_DISABLE_AFTER pauses it,
    // judged here; a success ended the streak in recordDeliveryAttempt. Measured on Temporal's clock, this
    // attempt's scheduled time as Temporal gives it (never after the attempt; the time-skipping test server
    // moves it), so a test can skip 5 days; the instants stored for display (failing_since, disabled_at)
    // stay this worker's clock, as events' created_at.
    // The attempt is recorded by now, so an error here (the database's) does not fail the run: its
    // retry by Temporal's policy, seconds later, would look like the one the schedule brings back and
    // send the next attempt at once (spec Events rule 4). The endpoint's next failed attempt judges it.
    const autoDisabled = delivered
      ? undefined
      : await judgeEndpointHealth(endpointId, startedAt, new Date(info.currentAttemptScheduledTimestampMs)).catch((failure: unknown) => {
          log.warn('webhook endpoint health not judged; its next failed attempt will be', { endpointId, error: String(failure) });
          return undefined;
        });
    if (autoDisabled) {
      log.warn('webhook endpoint disabled: every attempt failed', { endpointId, notified: autoDisabled.deliveries.length });
      if (autoDisabled.deliveries.length > 0 && deps.temporal) {
        // Not started (Temporal unreachable): the deliveries stay pending and the reconciler drives them.
        await startRedelivery(deps.temporal, info.taskQueue, autoDisabled.deliveries).catch((failure: unknown) =>
          log.warn('webhook_endpoint.disabled deliveries not started; the reconciler will', { endpointId, error: String(failure) }),
        );
      }
    }
    if (!stillDriving) {
      log.info('webhook delivery taken over during its attempt', { eventId, endpointId, attempt });
      return { outcome: 'superseded', attempts: attempt };
    }

    // One line per attempt: a delivered one at debug (cds_webhook_attempts_total{outcome="success"}
    // counts it and the delivery log keeps it), a failed one at info with its retry's delay.
    if (delivered) {
      log.debug('webhook delivered', { eventId, endpointId, attempt, statusCode, ms: Math.round(durationMs) });
      return { outcome: 'delivered', attempts: attempt };
    }
    if (retriesLeft) {
      log.info('webhook attempt failed; retry scheduled', { eventId, endpointId, attempt, delayMs: schedule[attempt - 1], error });
      return {
        outcome: 'retry',
        attempts: attempt,
        delayMs: schedule[attempt - 1],
        type: 'WebhookAttemptFailed',
        message: `webhook attempt ${attempt} failed: ${error}`,
      };
    }
    log.warn('webhook undeliverable', { eventId, endpointId, attempts: attempt, error });
    webhookUndeliverable.inc();
    return { outcome: 'undeliverable', attempts: attempt };
  }

  return {
    /**
     * Drives one delivery to its end: each failed attempt ends the run with a retryable failure whose
     * nextRetryDelay is the schedule's, so Temporal brings it back then.
     */
    async deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
      const info = Context.current().info;
      const result = await attemptDelivery(input, input.driver ?? `${info.workflowExecution?.workflowId}/${info.activityId}`);
      if (result.outcome !== 'retry') return result;
      throw ApplicationFailure.create({ type: result.type, message: result.message, nextRetryDelay: result.delayMs });
    },

    /**
     * The first attempt of every delivery of one change of a dispatch, at once: one activity where a
     * change fires several events, so the dispatch's history grows by one activity per change, not
     * one per delivery. A delivery with retries to come is answered `retry` with its delay; the
     * workflow waits that long and drives it on with deliverWebhook under the same driver.
     */
    async deliverWebhooks(input: { deliveries: DeliveryKey[]; driver: string }): Promise<AttemptResult[]> {
      // One delivery's error (the database's) fails the activity only once every sibling's attempt has
      // ended and been recorded: Temporal's retry of the change then finds none still sending (it would
      // send that number again, at once), settled ones settled, and failed ones not yet due.
      const settled = await Promise.allSettled(
        input.deliveries.map((delivery) => attemptDelivery({ ...delivery, driver: input.driver }, input.driver, true)),
      );
      const failed = settled.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
      return settled.map((result) => (result as PromiseFulfilledResult<AttemptResult>).value);
    },
  };
}

/** The longest part of a redirect's Location the delivery log keeps. */
const LOCATION_LOGGED_CHARS = 300;

/** A redirect's words for the delivery log: it is not followed (docs/webhooks.md), and where it pointed. */
function notFollowed(statusCode: number, location: string | undefined): string {
  const where = location ? ` (Location: ${location.slice(0, LOCATION_LOGGED_CHARS)})` : '';
  return `HTTP ${statusCode}: redirects are not followed; the endpoint’s URL must answer 2xx itself${where}`;
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
