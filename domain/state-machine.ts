// The dispatch state machine (spec "States and transitions" + DESIGN.md "States"), as pure
// functions shared by the workflow and the tests. It decides what a carrier event does to a card;
// it never reads a clock, a database or Temporal.
//
// Rules, each named as the tests name them:
// - forward moves: dispatched → in_transit → out_for_delivery → delivered, and may skip states;
// - exception is entered from any state but delivered, and left by any later forward status;
// - a new exception while in exception fires delivery.exception again, but no status.updated;
// - delivered is terminal;
// - an event older (occurred_at) than the one that set the current status is recorded, changes nothing;
// - a forward status below the current one (outside exception) changes nothing.
import type { CarrierEventBody, DispatchStatus, ExceptionReason, RecommendedAction } from './schemas.js';

export const WEBHOOK_EVENT_TYPES = ['status.updated', 'delivery.predicted', 'delivery.completed', 'delivery.exception'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const FORWARD_RANK: Record<Exclude<DispatchStatus, 'exception'>, number> = {
  dispatched: 0,
  in_transit: 1,
  out_for_delivery: 2,
  delivered: 3,
};

export interface DispatchState {
  status: DispatchStatus;
  /** occurred_at (ISO, normalised to UTC) of the event that set the current status; the dispatch date at first. */
  statusSince: string;
  /** Set while in exception. */
  exceptionReason?: ExceptionReason;
}

/**
 * What a carrier event did: `applied` changed the status; `exception_repeated` kept the card in
 * exception but is a new exception; the rest changed nothing.
 */
export type EventEffect = 'applied' | 'exception_repeated' | 'stale' | 'after_delivery' | 'backward' | 'unchanged';

export interface Transition {
  state: DispatchState;
  effect: EventEffect;
  /** Webhook events this transition fires, in order (delivery.predicted is decided by the prediction). */
  events: WebhookEventType[];
}

export function initialState(dispatchDate: string): DispatchState {
  return { status: 'dispatched', statusSince: normaliseTimestamp(dispatchDate) };
}

export function normaliseTimestamp(timestamp: string): string {
  return new Date(Date.parse(timestamp)).toISOString();
}

/** The key carrier events are deduplicated by: the carrier's event_id, else status + instant. */
export function dedupeKey(event: Pick<CarrierEventBody, 'event_id' | 'status' | 'occurred_at'>): string {
  return event.event_id !== undefined ? `id:${event.event_id}` : `at:${event.status}@${normaliseTimestamp(event.occurred_at)}`;
}

export function applyCarrierEvent(state: DispatchState, event: CarrierEventBody): Transition {
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
