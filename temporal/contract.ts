// The Temporal contract: the workflows' public surface — the dispatch workflow's input,
// registration update, carrier-event(s) and prediction-refresh signals and status query, and the other
// workflows' types and inputs. Imported by the workflows themselves and by the one client that
// calls them (temporal/client.ts), so both sides agree on names and payloads. The registered names
// must never change: recorded histories replay by them. No Node APIs here: this file is bundled
// into workflows.
import type { ReplayCursor, ReplayFilterInput } from '../domain/webhook-event-schemas.js';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Prediction } from '../domain/prediction.js';
import type { CarrierEventBody } from '../domain/carrier-event-schemas.js';
import type { StatusRecord } from '../domain/dispatch-schemas.js';
import type { DispatchState } from '../domain/state-machine.js';
import type { ExceptionReason } from '../domain/vocabulary.js';

export const DISPATCH_WORKFLOW_TYPE = 'dispatchWorkflow';

/** A dispatch as the workflow knows it: the validated registration plus who registered it. */
export interface DispatchRegistration {
  id: string;
  issuerId: string;
  mode: 'live' | 'test';
  /** ISO 8601 timestamp, normalised to UTC. */
  dispatchDate: string;
  destination: { postal_code: string; country_code: string };
  locale?: string;
  carrier?: string;
  trackingNumber?: string;
  reference?: string;
  /** Canonical JSON of the body as the issuer sent it (without defaults): a repeat must match it. */
  fingerprint: string;
}

/**
 * What each change of a dispatch needs of its registration (activities/projection.ts projectChange):
 * the prediction's and the message's inputs and the row's owner. The rest (carrier, tracking number,
 * reference, fingerprint) is stored once, by the first version's write, and never crosses again.
 */
export type DispatchFacts = Pick<DispatchRegistration, 'id' | 'issuerId' | 'mode' | 'dispatchDate' | 'destination' | 'locale'>;

/** The fields only the first version's write stores. */
export type RegistrationExtras = Pick<DispatchRegistration, 'carrier' | 'trackingNumber' | 'reference' | 'fingerprint'>;

/** What a run hands to the next one when it continues as new. */
export interface CarriedState {
  state: DispatchState;
  version: number;
  prediction: Prediction;
  /**
   * The status record of the version the run knew it for. Restarts from the projection always carry
   * it; a run carries it only while it holds it (the first version's; repeats after it are answered
   * from the projection).
   */
  record?: StatusRecord;
  seenEventKeys: string[];
  registeredOnce: boolean;
  /** Workflow time (epoch ms) of the last carrier event: a resting card's retention runs from it. */
  lastEventAt: number;
}

export interface DispatchWorkflowInput {
  registration: DispatchRegistration;
  carried?: CarriedState;
  options?: {
    /** How long a delivered dispatch stays open with no carrier event, in ms (workflows/dispatch.ts has the defaults). */
    deliveredRetentionMs?: number;
    /** How long a dispatch in exception stays open with no carrier event, in ms. */
    exceptionRetentionMs?: number;
    /** Continue as new once history passes this many events (default CONTINUE_AS_NEW_AFTER_EVENTS). */
    continueAsNewAfterEvents?: number;
  };
}

export interface CarrierEventInput extends CarrierEventBody {
  dedupeKey: string;
}

/**
 * A carrier event the service sends itself on the same signal: exception `overdue`, a reason no
 * carrier may send (activities/prediction-refresh.ts).
 */
export type ServiceCarrierEventInput = Omit<CarrierEventInput, 'reason'> & { reason: Extract<ExceptionReason, 'overdue'> };

/**
 * `rejected`: the dispatch can never be projected (docs/states.md "Failures that no retry
 * fixes"); its workflow has ended and the id cannot be registered again.
 */
export type RegisterOutcome =
  | { outcome: 'created'; record: StatusRecord }
  /** Without `record` when the workflow no longer holds it: the projection has it (api/registration.ts). */
  | { outcome: 'existing'; record?: StatusRecord }
  | { outcome: 'conflict'; reason: string }
  | { outcome: 'rejected'; reason: string };

export const registerUpdate = defineUpdate<RegisterOutcome, [DispatchRegistration]>('register');
export const carrierEventSignal = defineSignal<[CarrierEventInput]>('carrierEvent');
/**
 * Several carrier events of one dispatch at once, in arrival order: each is taken exactly as if it
 * came on its own `carrierEvent` signal (a tracking feed's long history, ingest/carrier-events.ts
 * ingestMany, sends a chunk per signal). `carrierEvent` stays: POST …/events sends it, and recorded
 * histories replay it.
 */
export const carrierEventsSignal = defineSignal<[CarrierEventInput[]]>('carrierEvents');

/**
 * Sent by the hourly prediction refresh to a dispatch whose recomputed window or confidence differs
 * from the one projected at `version`. The workflow writes a new version (which emits
 * delivery.predicted) unless it has moved past that version meanwhile: a newer version already
 * holds a fresh prediction.
 */
export interface PredictionRefreshRequest {
  version: number;
  /**
   * When the country statistics the refresh compared with were loaded (ISO); the projection write
   * reads none older, so it computes the window the refresh found.
   */
  statisticsAsOf: string;
}
export const predictionRefreshSignal = defineSignal<[PredictionRefreshRequest]>('refreshPrediction');

export interface DispatchSnapshot {
  state: DispatchState;
  version: number;
  prediction?: Prediction;
  seenEventKeys: number;
  pendingEvents: number;
}
export const snapshotQuery = defineQuery<DispatchSnapshot>('snapshot');

export const REDELIVERY_WORKFLOW_TYPE = 'redeliveryWorkflow';

/** The driver token of a dispatch's own deliveries (docs/webhooks.md "One driver per pending delivery"). */
export function dispatchDriver(dispatchId: string): string {
  return `dispatch:${dispatchId}`;
}

export interface DeliveryKey {
  eventId: string;
  endpointId: string;
}

/**
 * A redelivery run (workflows/redelivery.ts), in one of three modes:
 * - `redeliver`: a few given deliveries (a dashboard or API redelivery, a test event, the deliveries
 *   an auto-disabled endpoint leaves), each taken over from whatever drives it;
 * - `reconcile`: a batch the reconciler has already claimed (docs/webhooks.md "One driver per pending delivery"),
 *   driven without taking anything over;
 * - `replay`: an operator's or issuer's replay, paged: each run loads one page of keys after `cursor`
 *   through an activity, drives it with bounded concurrency, adds its outcomes to the replay's
 *   progress row and continues as new with the next cursor.
 * `replayId` is the driver token of the run's activities (and, for a replay, its progress row).
 */
export type RedeliveryInput =
  | { mode: 'redeliver' | 'reconcile'; replayId: string; keys: DeliveryKey[] }
  | {
      mode: 'replay';
      replayId: string;
      filter: ReplayFilterInput;
      cursor?: ReplayCursor;
      /** Tests only: the page size (default 500). */
      pageSize?: number;
      /** Outcomes of the pages before this run's (carried through continue-as-new). */
      totals?: RedeliverySummary;
    };

/** Totals of one redelivery run (its result; a paged replay's last run returns the totals of all pages). */
export interface RedeliverySummary {
  delivered: number;
  failed: number;
  skipped: number;
}

export const RECONCILE_DELIVERIES_WORKFLOW_TYPE = 'reconcileDeliveriesWorkflow';

export const PREDICTION_REFRESH_WORKFLOW_TYPE = 'predictionRefreshWorkflow';

/** What one bulk prediction refresh did (the refresh workflow's result). */
export interface PredictionRefreshSummary {
  /** Dispatches not delivered and not refreshed within the hour, whose prediction was recomputed. */
  considered: number;
  /** Of those, the ones whose window or confidence changed. */
  changed: number;
  /** Changed and claimed (still at the compared version, not refreshed within the hour), then signalled. */
  signalled: number;
  /** Signalled but without a running workflow (closed, or not on this Temporal cluster). */
  missing: number;
  /**
   * Not delivered OVERDUE_BUSINESS_DAYS business days after their window, claimed and signalled into
   * exception `overdue` (docs/states.md "Overdue").
   */
  overdue: number;
}

export const RETENTION_WORKFLOW_TYPE = 'retentionWorkflow';

/**
 * What one retention sweep removed (docs/privacy.md "What is kept, and for how long"), as
 * `npm run admin -- retention run --json` prints it: dispatches erased, webhook event payloads
 * cleared, transit history rows and tracking links deleted.
 */
export interface RetentionSummary {
  erased_dispatches: number;
  cleared_payloads: number;
  deleted_history_rows: number;
  deleted_links: number;
}

export const ERASURE_WORKFLOW_TYPE = 'erasureWorkflow';

/** The erasure of one dispatch (workflows/erasure.ts), run as workflow `erasure-<erasureId>`. */
export interface ErasureInput {
  erasureId: string;
  dispatchId: string;
  /**
   * How long to wait after the dispatch's runs are terminated before its rows are removed, in ms: an
   * activity already running when its workflow was terminated (a webhook POST, a projection write)
   * finishes within it and writes nothing after the rows leave.
   */
  settleMs: number;
}

/** What an erasure removed (the erasure workflow's result, and GET /v1/erasures/{id} `removed`). */
export interface ErasureSummary {
  rows: number;
  workflowRuns: number;
}

/** The workflow id of an erasure. */
export function erasureWorkflowId(erasureId: string): string {
  return `erasure-${erasureId}`;
}
