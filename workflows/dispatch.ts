// Step 3 of a carrier event's path (docs/architecture.md "The path of one carrier event"): the
// carrierEvent signal (or carrierEvents, a chunk of them) that ingest/carrier-events.ts (step 2)
// sends is folded here with domain/state-machine.ts (step 4); a change is prepared and written by
// activities/projection.ts (step 5) in one local activity, which also decides which webhook events
// it fires, and each delivery the write returns runs activities/webhook-delivery.ts (step 7).
//
// The dispatch workflow: one per dispatched card, workflow id = the dispatch UUID. It owns the card's
// state machine, dedupes carrier events (across continue-as-new), writes each version of the
// projection the API reads, delivers the webhook events each change fires (one activity for a
// change's first attempts, one per retry of a delivery, without blocking the state machine),
// rewrites its prediction when the hourly refresh signals that it changed, and shows operators the
// status in the Temporal UI. A card that rests, delivered or in exception, with no carrier event for
// its retention period completes; a later event starts it again from the projection
// (ingest/carrier-events.ts, docs/states.md "Closed dispatches"). A change refused because the
// dispatch's erasure was requested (activities/projection.ts `erased`) ends the run: nothing more is
// written or sent for it, and its erasure's workflow deletes the run (docs/privacy.md "Erasure").
//
// Shape (after temporalio/samples-typescript safe-message-handlers): state lives in one small
// class; handlers are registered first; the main loop waits on a condition, folds pending carrier
// events, then continues as new with plain-object state when the history is long enough.
//
// Versioning (docs/maintenance.md "Upgrading the workflow code safely"): before the first release,
// changes re-record the histories; from it on, patched() → deprecatePatch() → removal, on dated steps.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- OpenTelemetry's API (no I/O), not our api/ folder that `**/api` means
import * as otel from '@opentelemetry/api';
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { Prediction } from '../domain/prediction.js';
import type { StatusRecord } from '../domain/dispatch-schemas.js';
import { applyCarrierEvent, initialState, type CurrentStatus, type DispatchState } from '../domain/state-machine.js';
import type { EventEffect } from '../domain/vocabulary.js';
import {
  carrierEventSignal,
  carrierEventsSignal,
  dispatchDriver,
  predictionRefreshSignal,
  registerUpdate,
  snapshotQuery,
  type CarriedState,
  type CarrierEventInput,
  type DispatchFacts,
  type DispatchRegistration,
  type DispatchSnapshot,
  type DispatchWorkflowInput,
  type PredictionRefreshRequest,
  type RegisterOutcome,
} from '../temporal/contract.js';
import { Deliveries } from './deliveries.js';
import { COUNTRY_CODE, DISPATCH_STATUS, ISSUER_ID } from '../temporal/search-attributes.js';

// Local activities: they run inside the workflow task that decided them, so a change is prepared,
// decided, written and its deliveries scheduled in one task. Retried until they succeed: an accepted
// carrier event is never dropped.
const { projectChange, recordEffects } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** activities/projection.ts PROJECTION_REJECTED (not imported: that module is not workflow code). */
const PROJECTION_REJECTED = 'ProjectionRejected';

/**
 * How long a resting card stays open with no carrier event, so that late events find it running
 * (docs/states.md "Closed dispatches"). Delivered: a week catches the carriers' late duplicate scans.
 * Exception: a card that is lost, returned or overdue gets its next scan within days if it gets one
 * at all; after 30 quiet days it completes, and a later event starts it again from the projection.
 */
export const DEFAULT_DELIVERED_RETENTION_MS = 7 * 24 * 3600 * 1000;
export const DEFAULT_EXCEPTION_RETENTION_MS = 30 * 24 * 3600 * 1000;
/**
 * A run continues as new once its history holds this many events (or when Temporal suggests it):
 * a worker that has evicted the workflow replays the whole run to apply one event, and a card's whole
 * life is about 40 events (bench/event-cost), so only a card with an unusual number of events or
 * refreshes ever reaches it.
 */
export const CONTINUE_AS_NEW_AFTER_EVENTS = 400;
/** Dedupe keys kept across continue-as-new; far above the number of scans any real card gets. */
const MAX_SEEN_EVENT_KEYS = 5000;

class Dispatch {
  readonly registration: DispatchRegistration;
  /** What each change needs of the registration (temporal/contract.ts DispatchFacts). */
  readonly facts: DispatchFacts;
  state: DispatchState;
  version: number;
  prediction?: Prediction;
  /** The status record, while this run holds the current version's (the first's, or a carried one). */
  record?: StatusRecord;
  /** A version is written: the registration can be answered. */
  projected: boolean;
  registeredOnce: boolean;
  readonly seenEventKeys: Set<string>;
  readonly pending: CarrierEventInput[] = [];
  /** Workflow time (ms) of the last carrier event: a resting card's retention runs from it. */
  lastEventAt: number;
  /** A prediction refresh asked for and not yet done; repeated signals collapse into this one. */
  refreshRequested?: PredictionRefreshRequest;
  /** The webhook deliveries its changes started (deliveries.ts). */
  readonly deliveries = new Deliveries();
  /** Why the first projection was refused for good; the run then ends (docs/states.md "Failures that no retry fixes"). */
  rejected?: string;
  /** Its erasure was requested: a change's write refused it, and the run ends without writing again. */
  erased = false;
  /** The last carrier event whose change could not be projected, shown to operators. */
  lastRejection?: string;
  /** The status last shown in the DispatchStatus search attribute. */
  private published?: string;

  constructor(input: DispatchWorkflowInput) {
    this.registration = input.registration;
    const { id, issuerId, mode, dispatchDate, destination, locale } = input.registration;
    this.facts = { id, issuerId, mode, dispatchDate, destination, ...(locale === undefined ? {} : { locale }) };
    const carried = input.carried;
    this.state = carried?.state ?? initialState(input.registration.dispatchDate);
    this.version = carried?.version ?? 0;
    this.prediction = carried?.prediction;
    this.record = carried?.record;
    this.projected = carried !== undefined;
    this.registeredOnce = carried?.registeredOnce ?? false;
    this.seenEventKeys = new Set(carried?.seenEventKeys ?? []);
    this.lastEventAt = carried?.lastEventAt ?? Date.now();
  }

  /** Signal handler: queue a carrier event unless this dispatch has already seen it. */
  enqueue(event: CarrierEventInput): void {
    this.lastEventAt = Date.now();
    if (this.seenEventKeys.has(event.dedupeKey)) return;
    this.seenEventKeys.add(event.dedupeKey);
    this.pending.push(event);
  }

  /** Signal handler: queue a prediction refresh, unless the card is delivered (its window is final). */
  requestRefresh(request: PredictionRefreshRequest): void {
    if (this.state.status !== 'delivered') this.refreshRequested = request;
  }

  /**
   * Writes a new version with a recomputed prediction, unless a newer version than the refresh
   * compared with was written meanwhile: that one already holds a fresh prediction.
   */
  async processRefresh(): Promise<void> {
    const request = this.refreshRequested;
    this.refreshRequested = undefined;
    if (request === undefined) return;
    if (request.version !== this.version) {
      log.info('prediction refresh skipped: projection moved on', { requested: request.version, version: this.version });
      return;
    }
    await this.project(this.state, [], request.statisticsAsOf);
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
    await condition(() => this.projected || this.rejected !== undefined);
    if (!this.projected) return { outcome: 'rejected', reason: this.rejected! };
    const { record } = this;
    // Without the record (a repeat after the first version), the API answers from the projection.
    if (this.registeredOnce || record === undefined) return { outcome: 'existing', ...(record && { record }) };
    this.registeredOnce = true;
    return { outcome: 'created', record };
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

  /**
   * The next version: prepared (prediction and record), decided here (the webhook events it fires),
   * written in one transaction with the effects of the events folded into it. Throws the
   * projection's refusal; the version moves only once the write is durable, so the snapshot query
   * never runs ahead of what the API can read. Refused as erased: marks the run `erased`, nothing moves.
   */
  async project(state: DispatchState, effects: Array<{ dedupeKey: string; effect: EventEffect }>, statisticsAsOf?: string): Promise<void> {
    const version = this.version + 1;
    const { registration: r } = this;
    const first = this.version === 0;
    const result = await projectChange({
      dispatch: this.facts,
      ...(first && { registration: { carrier: r.carrier, trackingNumber: r.trackingNumber, reference: r.reference, fingerprint: r.fingerprint } }), // prettier-ignore
      version,
      state: currentStatus(state),
      ...(this.prediction && !first && { previous: { state: currentStatus(this.state), prediction: this.prediction } }),
      effects,
      timestamp: new Date().toISOString(),
      ...(statisticsAsOf === undefined ? {} : { statisticsAsOf }),
      ...(first && { withRecord: true }),
    });
    if ('erased' in result) {
      log.info('change refused: the dispatch is being erased', { version });
      this.erased = true;
      return;
    }
    this.state = state;
    this.version = version;
    this.prediction = result.prediction;
    this.record = result.record;
    this.projected = true;
    this.publish();
    this.deliveries.start(result.deliveries, dispatchDriver(this.registration.id));
  }

  /** Folds every queued carrier event, in arrival order; a change is written with the effects before it. */
  async processPending(): Promise<void> {
    let effects: Array<{ dedupeKey: string; effect: EventEffect }> = [];
    while (this.pending.length > 0 && !this.erased) {
      const event = this.pending.shift()!;
      // Logged by the activity that records it (activities/projection.ts 'projection written': each
      // event's dedupe key and effect, the status it led to), not here: see deliveries.ts.
      const transition = applyCarrierEvent(this.state, event);
      const effect = { dedupeKey: event.dedupeKey, effect: transition.effect };
      if (transition.effect !== 'applied' && transition.effect !== 'exception_repeated') {
        // Every accepted event joins the set the status is derived from, even one that changes nothing.
        this.state = transition.state;
        effects.push(effect);
        continue;
      }
      const reason = await refusedForGood(() => this.project(transition.state, [...effects, effect]));
      if (reason === undefined) {
        effects = [];
        continue;
      }
      // The change can never be projected: the card stays as it was and the event says why.
      log.error('carrier event rejected: its change cannot be projected', { dedupeKey: event.dedupeKey, reason });
      effects.push({ dedupeKey: event.dedupeKey, effect: 'rejected' });
      this.lastRejection = `${event.dedupeKey}: ${reason}`;
      this.publish();
    }
    if (this.erased) this.pending.length = 0;
    if (effects.length === 0 || this.erased) return;
    await recordEffects({ dispatch: this.facts, effects });
  }

  /** The status in the Temporal UI: search attributes when the status changed, the details always. */
  publish(): void {
    if (this.published !== this.state.status) {
      upsertSearchAttributes([
        { key: DISPATCH_STATUS, value: this.state.status },
        ...(this.published === undefined
          ? [
              { key: ISSUER_ID, value: this.registration.issuerId },
              { key: COUNTRY_CODE, value: this.registration.destination.country_code },
            ]
          : []),
      ]);
      this.published = this.state.status;
    }
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
      ...(this.record && { record: this.record }),
      seenEventKeys: [...this.seenEventKeys].slice(-MAX_SEEN_EVENT_KEYS),
      registeredOnce: this.registeredOnce,
      lastEventAt: this.lastEventAt,
    };
  }
}

/** The status part of a state (what a change's activity reads of it): its set of events stays here. */
function currentStatus({ status, statusSince, exceptionReason }: DispatchState): CurrentStatus {
  return { status, statusSince, ...(exceptionReason === undefined ? {} : { exceptionReason }) };
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
  // Tracing (docs/monitoring.md "Traces"): queued events are processed in the trace of the signal
  // that brought the first of them, so its projection and webhook attempts continue the carrier
  // event's request. Only a context is kept, never a command: without tracing it is the empty one.
  let eventTrace: otel.Context | undefined;
  setHandler(carrierEventSignal, (event) => {
    eventTrace ??= otel.context.active();
    dispatch.enqueue(event);
  });
  // A chunk of one dispatch's events (a tracking feed's history): each as if it came on its own.
  setHandler(carrierEventsSignal, (events) => {
    eventTrace ??= otel.context.active();
    for (const event of events) dispatch.enqueue(event);
  });
  setHandler(predictionRefreshSignal, (request) => dispatch.requestRefresh(request));
  setHandler(registerUpdate, (candidate) => dispatch.register(candidate));
  setHandler(snapshotQuery, () => dispatch.snapshot());

  const options = input.options ?? {};
  const retentionMs = (status: string): number | undefined =>
    status === 'delivered'
      ? (options.deliveredRetentionMs ?? DEFAULT_DELIVERED_RETENTION_MS)
      : status === 'exception'
        ? (options.exceptionRetentionMs ?? DEFAULT_EXCEPTION_RETENTION_MS)
        : undefined;
  const continueAsNewAfter = options.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS;
  const shouldContinueAsNew = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= continueAsNewAfter;
  // A run hands over to the next only when nothing is left in it: no handler, no delivery.
  const canContinueAsNew = () => shouldContinueAsNew() && dispatch.deliveries.inFlight === 0 && allHandlersFinished();

  if (!dispatch.projected) {
    dispatch.rejected = await refusedForGood(() => dispatch.project(dispatch.state, []));
    if (dispatch.erased) dispatch.rejected = 'this dispatch was erased';
    if (dispatch.rejected !== undefined) {
      // Nothing was projected, so nothing can follow: answer the registration and end the run.
      log.error('registration rejected: its first projection cannot be written', { reason: dispatch.rejected });
      await condition(allHandlersFinished);
      return { status: 'rejected', version: 0 };
    }
  } else dispatch.publish();

  for (;;) {
    const woken = () => dispatch.pending.length > 0 || dispatch.refreshRequested !== undefined || canContinueAsNew();
    const retention = retentionMs(dispatch.state.status);
    if (retention === undefined) {
      await condition(woken);
    } else {
      // Resting: complete once no carrier event came for the retention period (a refresh does not count).
      const left = dispatch.lastEventAt + retention - Date.now();
      if (left <= 0 || !(await condition(woken, left))) {
        if (dispatch.pending.length === 0 && Date.now() >= dispatch.lastEventAt + retention) break;
      }
    }
    const trace = eventTrace ?? otel.context.active();
    eventTrace = undefined;
    await otel.context.with(trace, () => dispatch.processPending());
    // Awaited only when asked for: every promise in the sandbox costs the SDK a captured stack.
    if (dispatch.refreshRequested !== undefined && !dispatch.erased) await dispatch.processRefresh();
    if (dispatch.erased) break;
    if (dispatch.pending.length === 0 && dispatch.refreshRequested === undefined && canContinueAsNew()) {
      log.info('continuing as new', { historyLength: workflowInfo().historyLength, version: dispatch.version });
      await continueAsNew<typeof dispatchWorkflow>({ ...input, carried: dispatch.carry() });
    }
  }
  await condition(() => dispatch.deliveries.inFlight === 0 && allHandlersFinished());
  return { status: dispatch.erased ? 'erased' : dispatch.state.status, version: dispatch.version };
}
