// The webhook delivery activity: one run per (webhook event, endpoint), started by the dispatch
// workflow (DESIGN.md §1 "Webhook delivery"). Each attempt re-checks the URL (SSRF guard), POSTs the
// stored body bytes with fresh signatures, and records itself in delivery_attempts — Temporal's
// history keeps only the last attempt. The retry schedule is this activity's: a failed attempt
// throws a retryable ApplicationFailure whose nextRetryDelay is the schedule's entry for it; after
// the last retry the delivery is marked undeliverable and the activity RETURNS, so the workflow sees
// a settled delivery rather than a failure.
//
// The attempt number is the delivery's recorded attempts + 1, not Temporal's attempt counter: a run
// that never got to record its attempt (a worker killed mid-POST, the database down) is retried by
// Temporal's policy and sends the same number again, so the spec's 1..6 and its schedule count
// HTTP attempts only. The workflow's retry policy must therefore be unlimited, with a
// startToCloseTimeout comfortably above WEBHOOK_TIMEOUT_MS (it is also how fast a crash is noticed).
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { Pool } from '../db/pool.js';
import { loadDelivery, markDeliverySkipped, recordDeliveryAttempt } from '../db/webhooks.js';
import { signedHeaders } from '../domain/signing.js';
import type { Config } from '../platform/config.js';
import { checkWebhookUrl, postToCheckedAddress } from '../platform/ssrf-guard.js';

export interface DeliverWebhookInput {
  eventId: string;
  endpointId: string;
}

export interface DeliverWebhookResult {
  outcome: 'delivered' | 'undeliverable' | 'skipped';
  /** The attempt number this run ended on (1-based, as sent in X-Service-Delivery-Attempt). */
  attempts: number;
}

/** Well inside the workflow's heartbeatTimeout for deliverWebhook (10 s). */
const HEARTBEAT_EVERY_MS = 2000;

type DeliveryConfig = Pick<Config, 'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'>;

export function createWebhookDeliveryActivities(deps: { pool: Pool; config: DeliveryConfig; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  const schedule = deps.config.WEBHOOK_RETRY_SCHEDULE;

  return {
    async deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
      const { eventId, endpointId } = input;
      const delivery = await loadDelivery(deps.pool, eventId, endpointId);
      if (!delivery) {
        log.warn('webhook delivery not found', { eventId, endpointId });
        return { outcome: 'skipped', attempts: 0 };
      }
      const attempt = delivery.attempts + 1;
      const run = Context.current().info.attempt;
      if (run > attempt) log.info('webhook delivery resumed after an unrecorded run', { eventId, endpointId, attempt, run });
      // A run that already settled (its result was lost with a crashed worker) does not send again.
      if (delivery.state === 'delivered' || delivery.state === 'undeliverable' || delivery.state === 'skipped') {
        return { outcome: delivery.state, attempts: delivery.attempts };
      }
      // A paused endpoint's pending retries stop here, at their next attempt (README "Dashboard").
      const skipReason = delivery.endpoint.disabled
        ? 'endpoint removed'
        : delivery.endpoint.paused
          ? 'endpoint disabled'
          : !delivery.endpoint.events.includes(delivery.eventType)
            ? `endpoint no longer subscribed to ${delivery.eventType}`
            : undefined;
      if (skipReason) {
        await markDeliverySkipped(deps.pool, eventId, endpointId, skipReason);
        log.info('webhook delivery skipped', { eventId, endpointId, reason: skipReason });
        return { outcome: 'skipped', attempts: delivery.attempts };
      }

      const startedAt = now();
      const started = performance.now();
      // Only a slow attempt heartbeats (a fast one costs no extra call): a worker that dies mid-POST
      // is noticed by the heartbeat timeout, seconds later, instead of at the start-to-close limit.
      const context = Context.current();
      const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
      let statusCode: number | undefined;
      let responseHead: Buffer | undefined;
      let error: string | undefined;
      let requestHeaders: Record<string, string> | undefined;
      try {
        const checked = await checkWebhookUrl(delivery.endpoint.url, { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
        const headers = signedHeaders({ eventId, attempt, body: delivery.body, secrets: delivery.endpoint.secrets, now: startedAt });
        requestHeaders = headers;
        const response = await postToCheckedAddress(checked, { headers, body: delivery.body, timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS });
        statusCode = response.statusCode;
        responseHead = response.head;
        if (statusCode < 200 || statusCode > 299) error = `HTTP ${statusCode}`;
      } catch (failure) {
        error = (failure as Error).message || String(failure);
      } finally {
        clearInterval(heartbeat);
      }
      const durationMs = performance.now() - started;
      const delivered = error === undefined;
      const retriesLeft = attempt <= schedule.length;
      const state = delivered ? 'delivered' : retriesLeft ? 'pending' : 'undeliverable';
      await recordDeliveryAttempt(deps.pool, {
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
      });

      if (delivered) return { outcome: 'delivered', attempts: attempt };
      if (retriesLeft) {
        throw ApplicationFailure.create({
          type: 'WebhookAttemptFailed',
          message: `webhook attempt ${attempt} failed: ${error}`,
          nextRetryDelay: schedule[attempt - 1],
        });
      }
      log.warn('webhook undeliverable', { eventId, endpointId, attempts: attempt, error });
      return { outcome: 'undeliverable', attempts: attempt };
    },
  };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
