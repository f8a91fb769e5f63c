// Step 2 of a carrier event's path (HTTP → workflow → projection → webhook): the carrierEvent
// signal of api/routes/events.ts (step 1) is folded by domain/state-machine.ts; each change is
// written by activities/projection.ts (step 3), and each delivery it returns runs
// activities/webhook-delivery.ts (step 5).
// The dispatch workflow: one per dispatched card, workflow id = the dispatch UUID. It owns the
// card's state machine, dedupes carrier events (across continue-as-new), writes the projection the
// API reads through a versioned activity, delivers the webhook events each change fires (one
// activity per event and endpoint, without blocking the state machine), rewrites its prediction when
// the hourly refresh signals that it changed, and shows operators the status in the Temporal UI.
//
// Shape (after temporalio/samples-typescript safe-message-handlers): state lives in one small
// class; handlers are registered first; the main loop waits on a condition, folds pending carrier
// events, then continues as new with plain-object state when Temporal suggests it.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- OpenTelemetry's API (no I/O), not our api/ folder that `**/api` means
import * as otel from '@opentelemetry/api';
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { Prediction } from '../domain/prediction.js';
import type { StatusRecord } from '../domain/schemas.js';
import {
  applyCarrierEvent,
  applyCarrierEventLegacy,
  initialState,
  type DispatchState,
  type EventEffect,
  type WebhookEventType,
} from '../domain/state-machine.js';
import {
  carrierEventSignal,
  predictionRefreshSignal,
  registerUpdate,
  snapshotQuery,
  type CarriedState,
  type CarrierEventInput,
  type DispatchRegistration,
  type DispatchSnapshot,
  type DispatchWorkflowInput,
  type PredictionRefreshRequest,
  type RegisterOutcome,
} from '../temporal/contract.js';
import { DELIVERY_ACTIVITY_OPTIONS } from './delivery-options.js';
import { COUNTRY_CODE, DISPATCH_STATUS, ISSUER_ID } from '../temporal/search-attributes.js';

// Projection writes retry until they succeed: an accepted carrier event is never dropped.
const PROJECTION_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const;
const { writeProjection, recordCarrierEventEffects } = proxyActivities<Activities>(PROJECTION_ACTIVITY_OPTIONS);
// The projection write as a local activity: it runs inside the workflow task that decided it, so the
// deliveries it returns are scheduled without a second workflow task round trip. Measured in
// bench/webhook-latency: the dispatch shape went from 34 to 56 deliveries/s on the dev server.
const { writeProjection: writeProjectionLocally } = proxyLocalActivities<Activities>(PROJECTION_ACTIVITY_OPTIONS);
/** Runs recorded before this change wrote the projection as a regular activity; they replay so. */
const PROJECTION_AS_LOCAL_ACTIVITY = 'projection-as-local-activity';
/**
 * Runs recorded before the order-independent status (docs/states.md) folded events in arrival order (an event older than the current
 * status was stale, so a scan dated before registration was lost); they replay so. From this patch
 * on the status is a function of the set of events.
 */
const ORDER_INDEPENDENT_STATUS = 'order-independent-status';

/** activities/projection.ts PROJECTION_REJECTED (not imported: that module is not workflow code). */
const PROJECTION_REJECTED = 'ProjectionRejected';

// One activity per (webhook event, endpoint); see delivery-options.ts for its retry policy.
const { deliverWebhook } = proxyActivities<Activities>(DELIVERY_ACTIVITY_OPTIONS);

const DEFAULT_DELIVERED_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** Dedupe keys kept across continue-as-new; far above the number of scans any real card gets. */
const MAX_SEEN_EVENT_KEYS = 5000;

class Dispatch {
  readonly registration: DispatchRegistration;
  state: DispatchState;
  version: number;
  prediction?: Prediction;
  record?: StatusRecord;
  registeredOnce: boolean;
  readonly seenEventKeys: Set<string>;
  readonly pending: CarrierEventInput[] = [];
  /** A prediction refresh asked for and not yet done; repeated signals collapse into this one. */
  refreshRequested?: PredictionRefreshRequest;
  /** Webhook deliveries started and not yet settled (delivered, undeliverable or skipped). */
  deliveriesInFlight = 0;
  /** Why the first projection was refused for good; the run then ends (docs/states.md "Failures that no retry fixes"). */
  rejected?: string;
  /** The last carrier event whose change could not be projected, shown to operators. */
  lastRejection?: string;

  constructor(input: DispatchWorkflowInput) {
    this.registration = input.registration;
    const carried = input.carried;
    this.state = carried?.state ?? initialState(input.registration.dispatchDate);
    this.version = carried?.version ?? 0;
    this.prediction = carried?.prediction;
    this.record = carried?.record;
    this.registeredOnce = carried?.registeredOnce ?? false;
    this.seenEventKeys = new Set(carried?.seenEventKeys ?? []);
  }

  /** Signal handler: queue a carrier event unless this dispatch has already seen it. */
  enqueue(event: CarrierEventInput): void {
    if (this.seenEventKeys.has(event.dedupeKey)) return;
    this.seenEventKeys.add(event.dedupeKey);
    this.pending.push(event);
  }

  /** Signal handler: queue a prediction refresh, unless the card is delivered (its window is final). */
  requestRefresh(request: PredictionRefreshRequest): void {
    if (this.state.status !== 'delivered') this.refreshRequested = request;
  }

  /**
   * Writes a new version with a recomputed prediction (delivery.predicted is added by the projection
   * activity when it changed), unless a newer version than the refresh compared with was written
   * meanwhile: that one already holds a fresh prediction.
   */
  async processRefresh(): Promise<void> {
    const request = this.refreshRequested;
    this.refreshRequested = undefined;
    if (request === undefined) return;
    if (request.version !== this.version) {
      log.info('prediction refresh skipped: projection moved on', { requested: request.version, version: this.version });
      return;
    }
    await this.project([], [], request.statisticsAsOf);
  }

  /** Update handler: answer a registration once the first projection is durable. */
  async register(candidate: DispatchRegistration): Promise<RegisterOutcome> {
    const own = this.registration;
    if (candidate.issuerId !== own.issuerId || candidate.mode !== own.mode) {
      return { outcome: 'conflict', reason: 'a dispatch with this id already exists' };
    }
    if (candidate.fingerprint !== own.fingerprint) {
      return { outcome: 'conflict', reason: 'this dispatch id was already registered with a different body' };
    }
    await condition(() => this.record !== undefined || this.rejected !== undefined);
    if (this.record === undefined) return { outcome: 'rejected', reason: this.rejected! };
    const outcome = this.registeredOnce ? 'existing' : 'created';
    this.registeredOnce = true;
    return { outcome, record: this.record! };
  }

  snapshot(): DispatchSnapshot {
    return {
      state: this.state,
      version: this.version,
      prediction: this.prediction,
      seenEventKeys: this.seenEventKeys.size,
      pendingEvents: this.pending.length,
    };
  }

  /** Writes the next version of the projection and publishes it to operators. */
  async project(
    eventEffects: Array<{ dedupeKey: string; effect: EventEffect }>,
    webhookEvents: WebhookEventType[] = [],
    statisticsAsOf?: string,
  ): Promise<void> {
    // The version moves only once the write is durable, so the snapshot query never runs ahead of
    // what the API can read.
    const version = this.version + 1;
    const input = {
      registration: this.registration,
      state: this.state,
      version,
      eventEffects,
      webhookEvents,
      previousPrediction: this.prediction,
      // Only on a refresh's write, and only as an input: no new command, so recorded runs replay.
      ...(statisticsAsOf === undefined ? {} : { statisticsAsOf }),
    };
    const result = patched(PROJECTION_AS_LOCAL_ACTIVITY) ? await writeProjectionLocally(input) : await writeProjection(input);
    this.version = version;
    this.prediction = result.prediction;
    this.record = result.record;
    this.publish();
    // Histories recorded before webhooks existed have no `deliveries` in this result.
    for (const delivery of result.deliveries ?? []) this.startDelivery(delivery);
  }

  /** Starts one delivery and lets the state machine go on; the run ends only once all have settled. */
  startDelivery(delivery: { eventId: string; endpointId: string }): void {
    this.deliveriesInFlight += 1;
    deliverWebhook(delivery)
      .then((result) => log.info('webhook delivery settled', { ...delivery, ...result }))
      .catch((error) => log.error('webhook delivery failed', { ...delivery, error: String(error) }))
      .finally(() => (this.deliveriesInFlight -= 1));
  }

  /** Folds every queued carrier event, in arrival order, into the state. */
  async processPending(): Promise<void> {
    let unrecorded: Array<{ dedupeKey: string; effect: EventEffect }> = [];
    while (this.pending.length > 0) {
      const event = this.pending.shift()!;
      const transition = patched(ORDER_INDEPENDENT_STATUS)
        ? applyCarrierEvent(this.state, event)
        : applyCarrierEventLegacy(this.state, event);
      unrecorded.push({ dedupeKey: event.dedupeKey, effect: transition.effect });
      log.info('carrier event', {
        dedupeKey: event.dedupeKey,
        status: event.status,
        occurredAt: event.occurred_at,
        effect: transition.effect,
        from: this.state.status,
        to: transition.state.status,
      });
      // Every accepted event joins the set the status is derived from, even one that changes nothing.
      const previous = this.state;
      this.state = transition.state;
      if (transition.effect === 'applied' || transition.effect === 'exception_repeated') {
        const reason = await refusedForGood(() => this.project(unrecorded, transition.events));
        if (reason !== undefined) {
          // The change can never be projected: the card stays as it was and the event says why.
          log.error('carrier event rejected: its change cannot be projected', { dedupeKey: event.dedupeKey, reason });
          this.state = previous;
          unrecorded[unrecorded.length - 1] = { dedupeKey: event.dedupeKey, effect: 'rejected' };
          this.lastRejection = `${event.dedupeKey}: ${reason}`;
          this.publish();
          continue;
        }
        unrecorded = [];
      }
    }
    if (unrecorded.length > 0) {
      await recordCarrierEventEffects({ dispatchId: this.registration.id, eventEffects: unrecorded });
    }
  }

  publish(): void {
    upsertSearchAttributes([
      { key: DISPATCH_STATUS, value: this.state.status },
      { key: ISSUER_ID, value: this.registration.issuerId },
      { key: COUNTRY_CODE, value: this.registration.destination.country_code },
    ]);
    const window = this.prediction
      ? `${this.prediction.window.min} → ${this.prediction.window.max} (${this.prediction.confidence})`
      : 'n/a';
    setCurrentDetails(
      [
        `**Status:** ${this.state.status}${this.state.exceptionReason ? ` (${this.state.exceptionReason})` : ''}`,
        `**Delivery window:** ${window}`,
        `**Destination:** ${this.registration.destination.country_code} ${this.registration.destination.postal_code}`,
        `**Projection version:** ${this.version}`,
        ...(this.lastRejection ? [`**Last rejected carrier event:** ${this.lastRejection}`] : []),
      ].join('\n\n'),
    );
  }

  carry(): CarriedState {
    return {
      state: this.state,
      version: this.version,
      prediction: this.prediction!,
      record: this.record!,
      seenEventKeys: [...this.seenEventKeys].slice(-MAX_SEEN_EVENT_KEYS),
      registeredOnce: this.registeredOnce,
    };
  }
}

/** Runs `write`; the reason when the projection refused it for good, undefined when it succeeded. */
async function refusedForGood(write: () => Promise<void>): Promise<string | undefined> {
  try {
    await write();
    return undefined;
  } catch (error) {
    // A regular activity's failure arrives as an ActivityFailure around it, a local one's as itself.
    const failure = error instanceof ActivityFailure ? error.cause : error;
    if (failure instanceof ApplicationFailure && failure.type === PROJECTION_REJECTED) return failure.message;
    throw error;
  }
}

export async function dispatchWorkflow(input: DispatchWorkflowInput): Promise<{ status: string; version: number }> {
  const dispatch = new Dispatch(input);
  // Tracing (docs/operations.md "Traces"): queued events are processed in the trace of the signal
  // that brought the first of them, so its projection and webhook attempts continue the carrier
  // event's request. Only a context is kept, never a command: without tracing it is the empty one.
  let eventTrace: otel.Context | undefined;
  setHandler(carrierEventSignal, (event) => {
    eventTrace ??= otel.context.active();
    dispatch.enqueue(event);
  });
  setHandler(predictionRefreshSignal, (request) => dispatch.requestRefresh(request));
  setHandler(registerUpdate, (candidate) => dispatch.register(candidate));
  setHandler(snapshotQuery, () => dispatch.snapshot());

  const retentionMs = input.options?.deliveredRetentionMs ?? DEFAULT_DELIVERED_RETENTION_MS;
  const continueAsNewAfter = input.options?.continueAsNewAfterEvents;
  const shouldContinueAsNew = () =>
    workflowInfo().continueAsNewSuggested || (continueAsNewAfter !== undefined && workflowInfo().historyLength >= continueAsNewAfter);
  // A run hands over to the next only when nothing is left in it: no handler, no delivery.
  const canContinueAsNew = () => shouldContinueAsNew() && dispatch.deliveriesInFlight === 0 && allHandlersFinished();

  if (dispatch.record === undefined) {
    dispatch.rejected = await refusedForGood(() => dispatch.project([]));
    if (dispatch.rejected !== undefined) {
      // Nothing was projected, so nothing can follow: answer the registration and end the run.
      log.error('registration rejected: its first projection cannot be written', { reason: dispatch.rejected });
      await condition(allHandlersFinished);
      return { status: 'rejected', version: 0 };
    }
  } else dispatch.publish();

  for (;;) {
    const woken = () => dispatch.pending.length > 0 || dispatch.refreshRequested !== undefined || canContinueAsNew();
    if (dispatch.state.status === 'delivered') {
      // Terminal: stay open a while so late carrier events are recorded as such, then complete.
      if (!(await condition(woken, retentionMs))) break;
    } else {
      await condition(woken);
    }
    const trace = eventTrace ?? otel.context.active();
    eventTrace = undefined;
    await otel.context.with(trace, () => dispatch.processPending());
    await dispatch.processRefresh();
    if (dispatch.pending.length === 0 && dispatch.refreshRequested === undefined && canContinueAsNew()) {
      log.info('continuing as new', { historyLength: workflowInfo().historyLength, version: dispatch.version });
      await continueAsNew<typeof dispatchWorkflow>({ ...input, carried: dispatch.carry() });
    }
  }
  await condition(() => dispatch.deliveriesInFlight === 0 && allHandlersFinished());
  return { status: dispatch.state.status, version: dispatch.version };
}
