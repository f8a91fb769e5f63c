// The dispatch state machine (spec "States and transitions" + docs/states.md,
// "The status is a function of the set of events"), as pure functions shared by the workflow and the tests. It decides
// what a carrier event does to a card; it never reads a clock, a database or Temporal.
//
// The status is a function of the SET of carrier events accepted, whatever order they arrive in.
// With E the occurred_at of the latest exception event (none: −∞):
// - delivered if any event says delivered (delivered is terminal);
// - else exception if an exception exists and no forward event is later than E;
// - else the highest-ranked forward status among the forward events later than E (dispatched when
//   there are none). Registration is not an event: a scan dated before it counts like any other.
// The set is kept as a summary that max/min fold commutatively (the latest scan per forward status,
// the latest exception, the first delivered scan), so any permutation ends in the same state.
// Webhook events fire for each change as events arrive:
// - status.updated on every change of status; delivery.completed on reaching delivered;
// - delivery.exception on entering exception, and again on a newer exception while in exception.
//
// `applyCarrierEventLegacy` is the arrival-order machine of runs recorded before this rule; the
// workflow keeps it behind patched() so those runs replay.
import type { CarrierEventBody, DispatchStatus, ExceptionReason, RecommendedAction } from './schemas.js';

export const WEBHOOK_EVENT_TYPES = [
  'status.updated',
  'delivery.predicted',
  'delivery.completed',
  'delivery.exception',
  // Not about a card: another endpoint of the issuer was auto-disabled (docs/webhooks.md "Auto-disable").
  'webhook_endpoint.disabled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

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
  /** The accepted events, summarised; absent in states carried by runs recorded before it existed. */
  seen?: SeenEvents;
}

/** The set of accepted carrier events, as much of it as the status depends on. */
export interface SeenEvents {
  /** Per forward status below delivered, the latest occurred_at (ISO UTC) of its scans. */
  latest: Partial<Record<Exclude<ForwardStatus, 'delivered'>, string>>;
  /** The earliest delivered scan. */
  deliveredAt?: string;
  /** The latest exception event (ties broken by reason, so the result does not depend on order). */
  exception?: { at: string; reason: ExceptionReason };
}

/**
 * What a carrier event did: `applied` changed the status; `exception_repeated` kept the card in
 * exception but is a new exception; `stale`, `backward`, `unchanged` and `after_delivery` changed
 * nothing (the event still joins the set). Set outside the state machine: `workflow_closed` (the
 * dispatch's workflow had closed undelivered, the API answered 409) and `rejected` (the projection
 * refused the change for good, see activities/projection.ts).
 */
export type EventEffect =
  'applied' | 'exception_repeated' | 'stale' | 'after_delivery' | 'backward' | 'unchanged' | 'workflow_closed' | 'rejected';

export interface Transition {
  state: DispatchState;
  effect: EventEffect;
  /** Webhook events this transition fires, in order (delivery.predicted is decided by the prediction). */
  events: WebhookEventType[];
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
  if (state.status === 'delivered') return { state, effect: 'after_delivery', events: [] };
  const seen = addEvent(state.seen ?? seenFromLegacyState(state), event);
  const derived = statusOf(seen, state.statusSince);
  const next: DispatchState = { ...derived, seen };
  if (derived.status !== state.status) {
    const events: WebhookEventType[] = ['status.updated'];
    if (derived.status === 'exception') events.push('delivery.exception');
    if (derived.status === 'delivered') events.push('delivery.completed');
    return { state: next, effect: 'applied', events };
  }
  if (derived.status === 'exception' && (derived.statusSince !== state.statusSince || derived.exceptionReason !== state.exceptionReason)) {
    return { state: next, effect: 'exception_repeated', events: ['delivery.exception'] };
  }
  return { state: next, effect: effectOfNoChange(state, event), events: [] };
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

/** A state carried by a run recorded before the set existed, read as the set that gave it. */
function seenFromLegacyState(state: DispatchState): SeenEvents {
  if (state.status === 'exception') return { latest: {}, exception: { at: state.statusSince, reason: state.exceptionReason ?? 'other' } };
  if (state.status === 'dispatched' || state.status === 'delivered') return { latest: {} };
  return { latest: { [state.status]: state.statusSince } };
}

/** Why an accepted event left the status as it was (names as the carrier event log shows them). */
function effectOfNoChange(state: DispatchState, event: CarrierEventBody): EventEffect {
  if (event.status === state.status) return 'unchanged';
  if (event.status === 'exception' || state.status === 'exception') return 'stale';
  const rank = FORWARD_RANK[event.status as ForwardStatus];
  return rank < FORWARD_RANK[state.status as ForwardStatus] ? 'backward' : 'stale';
}

/**
 * The arrival-order state machine of runs recorded before the order-independent status (patch
 * `order-independent-status` in workflows/dispatch.ts): an event older than the one that set the
 * current status is stale. Kept unchanged so those histories replay.
 */
export function applyCarrierEventLegacy(state: DispatchState, event: CarrierEventBody): Transition {
  const unchanged = (effect: EventEffect): Transition => ({ state, effect, events: [] });
  if (state.status === 'delivered') return unchanged('after_delivery');
  const occurredAt = normaliseTimestamp(event.occurred_at);
  if (Date.parse(occurredAt) < Date.parse(state.statusSince)) return unchanged('stale');

  if (event.status === 'exception') {
    const next: DispatchState = { status: 'exception', statusSince: occurredAt, exceptionReason: event.reason ?? 'other' };
    if (state.status === 'exception') return { state: next, effect: 'exception_repeated', events: ['delivery.exception'] };
    return { state: next, effect: 'applied', events: ['status.updated', 'delivery.exception'] };
  }

  const leavingException = state.status === 'exception';
  if (!leavingException && FORWARD_RANK[event.status] <= FORWARD_RANK[state.status as keyof typeof FORWARD_RANK]) {
    return unchanged(event.status === state.status ? 'unchanged' : 'backward');
  }
  const next: DispatchState = { status: event.status, statusSince: occurredAt };
  const events: WebhookEventType[] = ['status.updated'];
  if (event.status === 'delivered') events.push('delivery.completed');
  return { state: next, effect: 'applied', events };
}

export function recommendedActionFor(status: DispatchStatus): RecommendedAction {
  if (status === 'delivered') return 'Activate';
  if (status === 'exception') return 'ContactSupport';
  return 'None';
}
