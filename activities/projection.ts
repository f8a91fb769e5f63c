// Step 5 of a carrier event's path (docs/architecture.md "The path of one carrier event"): the one
// local activity of a change, `projectChange`, called by the dispatch workflow (workflows/dispatch.ts,
// step 3) with what the change needs and nothing more (the dispatch's facts, the new status, what the
// previous version showed):
// - it computes the prediction (from transit history and carrier conditions,
//   domain/prediction-model.ts), the ui suggestion and the status record, and decides which webhook
//   events the change fires from the versions before and after it (domain/state-machine.ts
//   webhookEventsOf, the one pure decision);
// - it writes them in one transaction (db/dispatch-changes.ts, step 6): the projection row, the
//   carrier events' effects, the webhook events and their deliveries, which the workflow hands to
//   activities/webhook-delivery.ts (step 7). A delivered live dispatch also joins the transit
//   history, once, if its delivery passes the history's rules; every delivered dispatch keeps its
//   outcome for the published accuracy, in the same write.
// Idempotent on (dispatch, version): a retry after a committed attempt answers what that attempt
// wrote. It answers the prediction and the deliveries; the status record only when asked (the
// registration's answer). `recordEffects` records the effects of carrier events that changed nothing.
// All are retried until they succeed, except for an error no retry fixes (PROJECTION_REJECTED).
// A dispatch whose erasure was requested gets nothing written (db/dispatch-changes.ts): projectChange
// then answers `{ erased: true }`, which is final, and the workflow ends its run; recordEffects
// writes nothing and answers as usual (its events' rows leave with the erasure).
import { ApplicationFailure, log } from '@temporalio/activity';
import type { Pool } from '../db/pool.js';
import { carrierEvents } from '../platform/metrics.js';
import { CountryStatisticsCache } from '../db/country-statistics-cache.js';
import { writeDispatchChange, type DeliveryOutcome, type DispatchChangeResult } from '../db/dispatch-changes.js';
import { judgeServiceDelivery } from '../db/transit-history.js';
import { destinationKey, loadTransitStatisticsFor } from '../db/transit-statistics.js';
import { notifyTransitStatisticsChanged, type AreaStatisticsCache } from '../db/area-statistics-cache.js';
import { businessDayOnOrAfter, businessDaysBetween, utcDateOf } from '../domain/calendar.js';
import { renderSuggestion } from '../domain/messages.js';
import { webhookEventsOf, type CurrentStatus } from '../domain/state-machine.js';
import type { Prediction } from '../domain/prediction.js';
import { predictFromHistory } from '../domain/prediction-model.js';
import type { StatusRecord } from '../domain/dispatch-schemas.js';
import type { EventEffect, WebhookEventType } from '../domain/vocabulary.js';
import { buildWebhookBody } from '../domain/webhook-payload.js';
import { buildStatusRecord } from '../domain/status-record.js';
import { dispatchDriver, type DeliveryKey, type DispatchFacts, type RegistrationExtras } from '../temporal/contract.js';
import type { HandedDeliveries } from './handed-deliveries.js';

interface Prepared {
  prediction: Prediction;
  record: StatusRecord;
}

/** A new version and what it shows, as written. */
interface Change {
  version: number;
  state: CurrentStatus;
  prediction: Prediction;
  record: StatusRecord;
  /** The webhook events the change fires, in order. */
  events: WebhookEventType[];
  /** The events' timestamp, fixed by the workflow. */
  timestamp: string;
}

type Effects = Array<{ dedupeKey: string; effect: EventEffect }>;

export interface ChangeInput {
  dispatch: DispatchFacts;
  /** The first version only: what the row stores once (its insert). */
  registration?: RegistrationExtras;
  version: number;
  /** The new status (the state machine's, without its set of events: nothing here reads it). */
  state: CurrentStatus;
  /** What the previous version showed; absent for the first. The webhook events are decided against it. */
  previous?: { state: CurrentStatus; prediction: Prediction };
  /** Effects of the carrier events folded since the last write, recorded in the carrier event log. */
  effects: Effects;
  /** The events' timestamp, fixed by the workflow. */
  timestamp: string;
  /**
   * For a change the prediction refresh asked for: when the refresh's country statistics were
   * loaded. This prediction reads none older (db/country-statistics-cache.ts).
   */
  statisticsAsOf?: string;
  /** Answer the status record too (the registration's answer needs it; nothing else in the workflow does). */
  withRecord?: boolean;
}

export interface ChangeResult {
  /** The prediction the version shows (what was written, on a retry after a committed attempt). */
  prediction: Prediction;
  deliveries: DeliveryKey[];
  record?: StatusRecord;
}

/** The answer for a dispatch whose erasure was requested: nothing was written, nothing is to be sent. */
export interface ErasedChange {
  erased: true;
}

export function createProjectionActivities(deps: {
  pool: Pool;
  now?: () => Date;
  countryStatistics?: CountryStatisticsCache;
  /** Where the write leaves its new deliveries' first attempts for deliverWebhooks in this worker. */
  handed?: HandedDeliveries;
  /** The worker's cache of area levels and delays (read every time without it). */
  areaStatistics?: AreaStatisticsCache;
}) {
  const now = deps.now ?? (() => new Date());
  const countryStatistics = deps.countryStatistics ?? new CountryStatisticsCache(deps.pool);
  return {
    async projectChange(input: ChangeInput): Promise<ChangeResult | ErasedChange> {
      try {
        return await projectChange(input);
      } catch (error) {
        throw failFastIfDeterministic(error, input.dispatch.id, input.version);
      }
    },

    async recordEffects(input: { dispatch: DispatchFacts; effects: Effects }): Promise<void> {
      try {
        await write(input.dispatch, undefined, input.effects, undefined);
      } catch (error) {
        throw failFastIfDeterministic(error, input.dispatch.id);
      }
    },
  };

  async function projectChange(input: ChangeInput): Promise<ChangeResult | ErasedChange> {
    const { dispatch, version, state, previous, statisticsAsOf } = input;
    const prepared = await prepare({ registration: dispatch, state, ...(statisticsAsOf === undefined ? {} : { statisticsAsOf }) });
    const events = webhookEventsOf(previous, { state, prediction: prepared.prediction });
    const result = await write(dispatch, input.registration, input.effects, { version, state, ...prepared, events, timestamp: input.timestamp }); // prettier-ignore
    if (result.erased) return { erased: true };
    // A retry after a committed attempt: that attempt's version is what the API reads and what fired.
    const shown =
      result.current?.version === version
        ? {
            prediction: {
              window: { min: result.current.windowMin, max: result.current.windowMax },
              confidence: result.current.confidenceLevel as Prediction['confidence'],
            },
            record: result.current.record,
          }
        : prepared;
    return { prediction: shown.prediction, deliveries: result.deliveries, ...(input.withRecord ? { record: shown.record } : {}) };
  }

  async function prepare({
    registration: reg,
    state,
    statisticsAsOf,
  }: {
    registration: DispatchFacts;
    state: CurrentStatus;
    statisticsAsOf?: string;
  }): Promise<Prepared> {
    const today = now().toISOString().slice(0, 10);
    // Delivered and out-for-delivery windows come from the carrier's scan, never from history.
    const usesHistory = state.status === 'dispatched' || state.status === 'in_transit' || state.status === 'exception';
    const destination = { countryCode: reg.destination.country_code, postalCode: reg.destination.postal_code };
    const statistics = usesHistory
      ? (
          await loadTransitStatisticsFor(
            deps.pool,
            [destination],
            today,
            countryStatistics.source(statisticsAsOf),
            deps.areaStatistics?.source,
          )
        ).get(destinationKey(destination))!
      : null;
    const prediction = predictFromHistory({ dispatchDate: reg.dispatchDate, destination: reg.destination, state, today }, statistics);
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
    return { prediction, record };
  }

  async function write(
    reg: DispatchFacts,
    registration: RegistrationExtras | undefined,
    effects: Effects,
    change: Change | undefined,
  ): Promise<DispatchChangeResult> {
    // A delivery's outcome (db/dispatch-changes.ts keeps it once, with the delivered version). A
    // test-mode delivery is whatever the issuer's test helper said: it must not teach the live model.
    const outcome: DeliveryOutcome | undefined =
      change?.state.status !== 'delivered'
        ? undefined
        : reg.mode === 'live'
          ? await recordDelivery(deps.pool, reg, change.state.statusSince, now().toISOString().slice(0, 10))
          : { deliveredDate: utcDateOf(change.state.statusSince), learned: false, notLearned: [] };
    const driver = dispatchDriver(reg.id);
    const { handed, ...result } = await writeDispatchChange(
      deps.pool,
      {
        dispatch: {
          id: reg.id,
          issuerId: reg.issuerId,
          mode: reg.mode,
          dispatchDate: reg.dispatchDate,
          postalCode: reg.destination.postal_code,
          countryCode: reg.destination.country_code,
          locale: reg.locale,
          ...(registration && {
            carrier: registration.carrier,
            trackingNumber: registration.trackingNumber,
            reference: registration.reference,
            registration: registration.fingerprint,
          }),
        },
        projection: change && {
          version: change.version,
          status: change.state.status,
          windowMin: change.prediction.window.min,
          windowMax: change.prediction.window.max,
          confidenceLevel: change.prediction.confidence,
          exceptionReason: change.state.exceptionReason,
          record: change.record,
        },
        effects,
        events: (change?.events ?? []).map((type) => ({
          type,
          body: Buffer.from(buildWebhookBody({ type, timestamp: change!.timestamp, data: change!.record }), 'utf8'),
        })),
        timestamp: change?.timestamp ?? now().toISOString(),
        outcome,
      },
      driver,
    );
    for (const delivery of handed) deps.handed?.put(driver, delivery);
    // cds_carrier_events_total{effect}: counted where the effects are recorded (a retried write counts again).
    for (const { effect } of effects) carrierEvents.inc({ effect });
    log.info('projection written', {
      dispatchId: reg.id,
      version: change?.version,
      status: change?.state.status,
      written: result.written,
      ...(result.erased && { erased: true }),
      webhookEvents: change?.events ?? [],
      // Each carrier event this write records, with what it did (the workflow logs none itself).
      effects: effects.map(({ dedupeKey, effect }) => ({ dedupeKey, effect })),
    });
    return result;
  }
}

/** The failure type the dispatch workflow recognises as "this change can never be projected". */
export const PROJECTION_REJECTED = 'ProjectionRejected';

/**
 * docs/states.md "Failures that no retry fixes": an error that a retry cannot fix (a date the
 * calendar cannot represent, a value Postgres refuses as data) becomes a non-retryable failure, so
 * the workflow refuses the change and says so instead of retrying it forever. Everything else (the
 * database down, a timeout) stays retryable: an accepted carrier event is never dropped.
 */
function failFastIfDeterministic(error: unknown, dispatchId: string, version?: number): unknown {
  if (!isDeterministic(error)) return error;
  const message = `cannot project dispatch ${dispatchId}${version === undefined ? '' : ` version ${version}`}: ${(error as Error).message}`;
  log.error('projection rejected', { dispatchId, version, error: String(error) });
  return ApplicationFailure.nonRetryable(message, PROJECTION_REJECTED);
}

function isDeterministic(error: unknown): boolean {
  if (error instanceof RangeError) return true;
  // SQLSTATE class 22 is "data exception" (an invalid or out-of-range value, a NUL byte in text),
  // class 23 "integrity constraint violation": the same row is refused again on every retry.
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

/**
 * The service's own completed live delivery joins the transit history (once per dispatch) if it
 * passes the history's rules; its outcome says whether it did and why not.
 */
async function recordDelivery(pool: Pool, reg: DispatchFacts, deliveredAt: string, today: string): Promise<DeliveryOutcome> {
  const country = reg.destination.country_code;
  const dispatchDate = utcDateOf(reg.dispatchDate);
  const deliveredDate = utcDateOf(deliveredAt);
  const { recorded, notLearned } = await judgeServiceDelivery(
    pool,
    reg.id,
    {
      postalCode: reg.destination.postal_code,
      countryCode: country,
      dispatchDate,
      deliveredDate,
      // Counted as the window is built: from the first business day on or after dispatch.
      businessDays: businessDaysBetween(businessDayOnOrAfter(dispatchDate, country), deliveredDate, country),
    },
    today,
  );
  // The country's areas changed: every worker's area cache forgets them (db/area-statistics-cache.ts).
  if (recorded) await notifyTransitStatisticsChanged(pool, country);
  return { deliveredDate, learned: notLearned.length === 0, notLearned };
}

export type ProjectionActivities = ReturnType<typeof createProjectionActivities>;
