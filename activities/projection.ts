// Step 3 of a carrier event's path (HTTP → workflow → projection → webhook): the writes of one
// version of a dispatch, called by the dispatch workflow (workflows/dispatch.ts, step 2). In order:
// the prediction (from transit history and carrier conditions, domain/prediction-model.ts) and the
// ui suggestion, the versioned projection row the API reads, the carrier events' effects, then the
// webhook events the change fires, decided by domain/webhook-events.ts (step 4); the deliveries it
// returns are what the workflow hands to activities/webhook-delivery.ts (step 5). A delivered live
// dispatch also joins the transit history.
// Idempotent: a retry writes the same version, which the monotonic upsert accepts once and ignores
// after, and finds the webhook events it made by their idempotency keys.
import { ApplicationFailure, log } from '@temporalio/activity';
import type { Pool } from '../db/pool.js';
import { carrierEvents } from '../platform/metrics.js';
import { recordEventEffects } from '../db/carrier-events.js';
import { upsertProjection } from '../db/dispatches.js';
import { CountryStatisticsCache } from '../db/country-statistics-cache.js';
import { recordServiceDelivery } from '../db/transit-history.js';
import { loadTransitStatistics } from '../db/transit-statistics.js';
import { createWebhookEvents } from '../db/webhooks.js';
import { businessDayOnOrAfter, businessDaysBetween, utcDateOf } from '../domain/calendar.js';
import { renderSuggestion } from '../domain/messages.js';
import type { Prediction } from '../domain/prediction.js';
import { predictFromHistory } from '../domain/prediction-model.js';
import type { StatusRecord } from '../domain/schemas.js';
import type { DispatchState, EventEffect, WebhookEventType } from '../domain/state-machine.js';
import { buildStatusRecord } from '../domain/status-record.js';
import { webhookEventsFired } from '../domain/webhook-events.js';
import type { DispatchRegistration } from '../temporal/contract.js';

export interface ProjectionInput {
  registration: DispatchRegistration;
  state: DispatchState;
  version: number;
  /** Effects of the carrier events folded into this version, recorded in the carrier event log. */
  eventEffects: Array<{ dedupeKey: string; effect: EventEffect }>;
  /** Webhook events the transition fired (domain/webhook-events.ts adds delivery.predicted when the window changes). */
  webhookEvents?: WebhookEventType[];
  /** The prediction of the previous version; absent at registration. */
  previousPrediction?: Prediction;
  /**
   * For a write the prediction refresh asked for: when the refresh's country statistics were
   * loaded. This write reads none older (db/country-statistics-cache.ts).
   */
  statisticsAsOf?: string;
}

export interface ProjectionResult {
  record: StatusRecord;
  prediction: Prediction;
  /** False when a newer version was already projected (this write was a late retry). */
  written: boolean;
  /** One (webhook event, endpoint) pair per delivery the workflow must now start. */
  deliveries: Array<{ eventId: string; endpointId: string }>;
}

export function createProjectionActivities(deps: { pool: Pool; now?: () => Date; countryStatistics?: CountryStatisticsCache }) {
  const now = deps.now ?? (() => new Date());
  const countryStatistics = deps.countryStatistics ?? new CountryStatisticsCache(deps.pool);
  return {
    async writeProjection(input: ProjectionInput): Promise<ProjectionResult> {
      try {
        return await writeProjection(input);
      } catch (error) {
        throw failFastIfDeterministic(error, input);
      }
    },

    async recordCarrierEventEffects(input: { dispatchId: string; eventEffects: ProjectionInput['eventEffects'] }): Promise<void> {
      await recordEventEffects(deps.pool, input.dispatchId, input.eventEffects);
      countEffects(input.eventEffects);
    },
  };

  async function writeProjection(input: ProjectionInput): Promise<ProjectionResult> {
    const { registration: reg, state } = input;
    const predictionInput = {
      dispatchDate: reg.dispatchDate,
      destination: reg.destination,
      state,
      today: now().toISOString().slice(0, 10),
    };
    // Delivered and out-for-delivery windows come from the carrier's scan, never from history.
    const usesHistory = state.status === 'dispatched' || state.status === 'in_transit' || state.status === 'exception';
    const statistics = usesHistory
      ? await loadTransitStatistics(
          deps.pool,
          { countryCode: reg.destination.country_code, postalCode: reg.destination.postal_code, today: predictionInput.today },
          countryStatistics.source(input.statisticsAsOf),
        )
      : null;
    const prediction = predictFromHistory(predictionInput, statistics);
    // A test-mode delivery is whatever the issuer's test helper said: it must not teach the live model.
    if (state.status === 'delivered' && reg.mode === 'live') await recordDelivery(deps.pool, reg, state.statusSince);
    const suggestion = renderSuggestion({
      status: state.status,
      window: prediction.window,
      confidence: prediction.confidence,
      exceptionReason: state.exceptionReason,
      registeredLocale: reg.locale,
      countryCode: reg.destination.country_code,
    });
    const record = buildStatusRecord({
      id: reg.id,
      status: state.status,
      dispatchDate: reg.dispatchDate,
      destination: reg.destination,
      prediction,
      suggestion,
    });
    const written = await upsertProjection(deps.pool, {
      id: reg.id,
      issuerId: reg.issuerId,
      mode: reg.mode,
      version: input.version,
      status: state.status,
      dispatchDate: reg.dispatchDate,
      postalCode: reg.destination.postal_code,
      countryCode: reg.destination.country_code,
      locale: reg.locale,
      carrier: reg.carrier,
      trackingNumber: reg.trackingNumber,
      reference: reg.reference,
      registration: reg.fingerprint,
      windowMin: prediction.window.min,
      windowMax: prediction.window.max,
      confidenceLevel: prediction.confidence,
      exceptionReason: state.exceptionReason,
      record,
    });
    await recordEventEffects(deps.pool, reg.id, input.eventEffects);
    countEffects(input.eventEffects);
    const events = webhookEventsFired({
      dispatchId: reg.id,
      version: input.version,
      transitionEvents: input.webhookEvents,
      previousPrediction: input.previousPrediction,
      prediction,
      record,
      timestamp: now().toISOString(),
    });
    // Each body is stored once; with `version`, a retried write also gets the deliveries of events
    // its first run decided and this run did not (the prediction depends on the clock).
    const deliveries = await createWebhookEvents(deps.pool, {
      dispatchId: reg.id,
      issuerId: reg.issuerId,
      mode: reg.mode,
      version: input.version,
      events,
    });
    const webhookEvents = events.map((event) => event.type);
    log.info('projection written', { dispatchId: reg.id, version: input.version, status: state.status, written, webhookEvents });
    return { record, prediction, written, deliveries };
  }
}

/** cds_carrier_events_total{effect}: counted here, where the effects are recorded (a retried write counts again). */
function countEffects(eventEffects: ProjectionInput['eventEffects']): void {
  for (const { effect } of eventEffects) carrierEvents.inc({ effect });
}

/** The failure type the dispatch workflow recognises as "this change can never be projected". */
export const PROJECTION_REJECTED = 'ProjectionRejected';

/**
 * docs/states.md "Failures that no retry fixes": an error that a retry cannot fix (a date the
 * calendar cannot represent, a value Postgres refuses as data) becomes a non-retryable failure, so
 * the workflow refuses the change and says so instead of retrying it forever. Everything else (the
 * database down, a timeout) stays retryable: an accepted carrier event is never dropped.
 */
function failFastIfDeterministic(error: unknown, input: ProjectionInput): unknown {
  if (!isDeterministic(error)) return error;
  const message = `cannot project dispatch ${input.registration.id} version ${input.version}: ${(error as Error).message}`;
  log.error('projection rejected', {
    dispatchId: input.registration.id,
    version: input.version,
    status: input.state.status,
    error: String(error),
  });
  return ApplicationFailure.nonRetryable(message, PROJECTION_REJECTED);
}

function isDeterministic(error: unknown): boolean {
  if (error instanceof RangeError) return true;
  // SQLSTATE class 22 is "data exception" (an invalid or out-of-range value, a NUL byte in text),
  // class 23 "integrity constraint violation": the same row is refused again on every retry.
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** The service's own completed live delivery joins the transit history (once per dispatch). */
async function recordDelivery(pool: Pool, reg: DispatchRegistration, deliveredAt: string): Promise<void> {
  const country = reg.destination.country_code;
  const dispatchDate = utcDateOf(reg.dispatchDate);
  const deliveredDate = utcDateOf(deliveredAt);
  await recordServiceDelivery(pool, reg.id, {
    postalCode: reg.destination.postal_code,
    countryCode: country,
    dispatchDate,
    deliveredDate,
    // Counted as the window is built: from the first business day on or after dispatch.
    businessDays: businessDaysBetween(businessDayOnOrAfter(dispatchDate, country), deliveredDate, country),
  });
}

export type ProjectionActivities = ReturnType<typeof createProjectionActivities>;
