// Step 4 of a carrier event's path (docs/architecture.md "The path of one carrier event"): the pure
// decisions the dispatch workflow (workflows/dispatch.ts, step 3) takes, what a carrier event does to
// a card (docs/states.md "The status is a function of the set of events") and which webhook events
// the change fires. Shared by the workflow, the ingest and the tests; it never reads a clock, a
// database or Temporal.
//
// The status is a function of the SET of carrier events accepted, whatever order they arrive in.
// With E the occurred_at of the latest exception event (none: −∞):
// - delivered if any event says delivered (delivered is terminal);
// - else exception if an exception exists and no forward event is later than E;
// - else the highest-ranked forward status among the forward events later than E (dispatched when
//   there are none). Registration is not an event: a scan dated before it counts like any other.
// The set is kept as a summary that max/min fold commutatively (the latest scan per forward status,
// the latest exception, the earliest delivered scan), so any permutation ends in the same status and
// reason. Delivered is terminal: a delivered scan received after delivery, even an earlier one, is
// `after_delivery` and moves nothing, so the delivered date is the first delivered scan received.
//
// Which webhook events a change fires (`webhookEventsOf`, taken by the change's activity,
// activities/projection.ts projectChange, from the dispatch before and after the change, before it
// is written; docs/states.md "Webhook events a change fires"):
// - `status.updated` on every change of status, then `delivery.exception` on entering exception or
//   `delivery.completed` on reaching delivered;
// - `delivery.exception` again for a newer exception (or another reason) while in exception;
// - `delivery.predicted` when the window or its confidence changed; the first prediction, at
//   registration, counts as a change.
// `webhook_endpoint.disabled` is not about a card: activities/webhook-delivery.ts fires it where it
// judges an endpoint's health.
import type { Prediction } from './prediction.js';
import type { CarrierEventBody } from './carrier-event-schemas.js';
import type { DispatchStatus, EventEffect, ExceptionReason, RecommendedAction, WebhookEventType } from './vocabulary.js';

const FORWARD_RANK: Record<Exclude<DispatchStatus, 'exception'>, number> = {
  dispatched: 0,
  in_transit: 1,
  out_for_delivery: 2,
  delivered: 3,
};

type ForwardStatus = keyof typeof FORWARD_RANK;

export interface DispatchState {
  status: DispatchStatus;
  /**
   * When the current status began, normalised to UTC: the latest scan of the current forward status,
   * the first delivered scan, the latest exception; the dispatch date while no event counts.
   */
  statusSince: string;
  /** Set while in exception. */
  exceptionReason?: ExceptionReason;
  /** The accepted events, summarised. */
  seen: SeenEvents;
}

/** The status part of a dispatch's state: what a prediction, the projection and the refresh read. */
export type CurrentStatus = Omit<DispatchState, 'seen'>;

/** The set of accepted carrier events, as much of it as the status depends on. */
export interface SeenEvents {
  /** Per forward status below delivered, the latest occurred_at (ISO UTC) of its scans. */
  latest: Partial<Record<Exclude<ForwardStatus, 'delivered'>, string>>;
  /** The earliest delivered scan. */
  deliveredAt?: string;
  /** The latest exception event (ties broken by reason, so the result does not depend on order). */
  exception?: { at: string; reason: ExceptionReason };
}

export interface Transition {
  state: DispatchState;
  effect: EventEffect;
}

export function initialState(dispatchDate: string): DispatchState {
  return { status: 'dispatched', statusSince: normaliseTimestamp(dispatchDate), seen: { latest: {} } };
}

export function normaliseTimestamp(timestamp: string): string {
  return new Date(Date.parse(timestamp)).toISOString();
}

/** The key carrier events are deduplicated by: the carrier's event_id, else status + instant. */
export function dedupeKey(event: Pick<CarrierEventBody, 'event_id' | 'status' | 'occurred_at'>): string {
  return event.event_id !== undefined ? `id:${event.event_id}` : `at:${event.status}@${normaliseTimestamp(event.occurred_at)}`;
}

/** Folds one accepted carrier event into the set and derives the status from the set (docs/states.md). */
export function applyCarrierEvent(state: DispatchState, event: CarrierEventBody): Transition {
  if (state.status === 'delivered') return { state, effect: 'after_delivery' };
  const seen = addEvent(state.seen, event);
  const derived = statusOf(seen, state.statusSince);
  const next: DispatchState = { ...derived, seen };
  if (derived.status !== state.status) return { state: next, effect: 'applied' };
  if (derived.status === 'exception' && (derived.statusSince !== state.statusSince || derived.exceptionReason !== state.exceptionReason)) {
    return { state: next, effect: 'exception_repeated' };
  }
  return { state: next, effect: effectOfNoChange(state, event) };
}

/**
 * The state a card in `current` is in as the one event that put it there leaves it: enough to judge
 * what another event would do, for a caller that knows only the projection (the test helpers).
 */
export function stateShowing(current: CurrentStatus): DispatchState {
  const { status, statusSince } = current;
  const seen: SeenEvents =
    status === 'exception'
      ? { latest: {}, exception: { at: statusSince, reason: current.exceptionReason ?? 'other' } }
      : status === 'delivered'
        ? { latest: {}, deliveredAt: statusSince }
        : status === 'dispatched'
          ? { latest: {} }
          : { latest: { [status]: statusSince } };
  return { ...current, seen };
}

/** The status the set of events gives (see the header); `since` answers while no event counts. */
export function statusOf(seen: SeenEvents, dispatchedSince: string): Omit<DispatchState, 'seen'> {
  if (seen.deliveredAt !== undefined) return { status: 'delivered', statusSince: seen.deliveredAt };
  const exceptionAt = seen.exception ? Date.parse(seen.exception.at) : -Infinity;
  let best: { status: ForwardStatus; at: string } | undefined;
  for (const status of ['out_for_delivery', 'in_transit', 'dispatched'] as const) {
    const at = seen.latest[status];
    if (at !== undefined && Date.parse(at) > exceptionAt) {
      best = { status, at };
      break;
    }
  }
  if (best) return { status: best.status, statusSince: best.at };
  if (seen.exception) return { status: 'exception', statusSince: seen.exception.at, exceptionReason: seen.exception.reason };
  return { status: 'dispatched', statusSince: dispatchedSince };
}

function addEvent(seen: SeenEvents, event: CarrierEventBody): SeenEvents {
  const at = normaliseTimestamp(event.occurred_at);
  if (event.status === 'delivered') {
    return seen.deliveredAt === undefined || at < seen.deliveredAt ? { ...seen, deliveredAt: at } : seen;
  }
  if (event.status === 'exception') {
    const reason = event.reason ?? 'other';
    const current = seen.exception;
    const newer = current === undefined || at > current.at || (at === current.at && reason > current.reason);
    return newer ? { ...seen, exception: { at, reason } } : seen;
  }
  const current = seen.latest[event.status];
  return current === undefined || at > current ? { ...seen, latest: { ...seen.latest, [event.status]: at } } : seen;
}

/** Why an accepted event left the status as it was (names as the carrier event log shows them). */
function effectOfNoChange(state: DispatchState, event: CarrierEventBody): EventEffect {
  if (event.status === state.status) return 'unchanged';
  if (event.status === 'exception' || state.status === 'exception') return 'stale';
  const rank = FORWARD_RANK[event.status as ForwardStatus];
  return rank < FORWARD_RANK[state.status as ForwardStatus] ? 'backward' : 'stale';
}

// ---------- what a change fires ----------

/** A dispatch as one version of its projection shows it. */
export interface ProjectedDispatch {
  state: Pick<DispatchState, 'status' | 'statusSince' | 'exceptionReason'>;
  prediction: Prediction;
}

/**
 * The webhook events the change from `before` (undefined at registration) to `after` fires, in the
 * order they are created.
 */
export function webhookEventsOf(before: ProjectedDispatch | undefined, after: ProjectedDispatch): WebhookEventType[] {
  const types: WebhookEventType[] = [];
  const from = before?.state;
  const to = after.state;
  if (from !== undefined && from.status !== to.status) {
    types.push('status.updated');
    if (to.status === 'exception') types.push('delivery.exception');
    if (to.status === 'delivered') types.push('delivery.completed');
  } else if (
    from !== undefined &&
    to.status === 'exception' &&
    (from.statusSince !== to.statusSince || from.exceptionReason !== to.exceptionReason)
  ) {
    types.push('delivery.exception');
  }
  if (predictionChanged(before?.prediction, after.prediction)) types.push('delivery.predicted');
  return types;
}

/** A new or revised window or confidence; the first prediction (at registration) counts as new. */
export function predictionChanged(previous: Prediction | undefined, next: Prediction): boolean {
  return (
    previous === undefined ||
    previous.window.min !== next.window.min ||
    previous.window.max !== next.window.max ||
    previous.confidence !== next.confidence
  );
}

export function recommendedActionFor(status: DispatchStatus): RecommendedAction {
  if (status === 'delivered') return 'Activate';
  if (status === 'exception') return 'ContactSupport';
  return 'None';
}
