// Carrier vocabularies (docs/carrier-events.md "Carrier vocabularies"): the tracking statuses of
// EasyPost trackers and of Stripe Issuing's card shipping, read as the service's five states and
// exception reasons by the one table below. POST /v1/dispatches/{id}/events takes a `vocabulary`
// field; the route maps the status here, at the edge, so the workflow and the projection only ever
// see the service's own vocabulary. A status that says nothing about where the card is (EasyPost's
// `unknown` and `error`) maps to nothing: the route refuses it with 400 rather than accepting and
// ignoring it (docs/http-contract.md "Input bounds and integrity promises").
import type { DispatchStatus, ExceptionReason } from './vocabulary.js';

export const EASYPOST_STATUSES = [
  'unknown',
  'pre_transit',
  'in_transit',
  'out_for_delivery',
  'delivered',
  'available_for_pickup',
  'return_to_sender',
  'failure',
  'cancelled',
  'error',
] as const;

export const STRIPE_ISSUING_STATUSES = ['pending', 'shipped', 'delivered', 'returned', 'failure', 'canceled'] as const;

export const CARRIER_VOCABULARIES = ['service', 'easypost', 'stripe_issuing'] as const;
export type CarrierVocabulary = (typeof CARRIER_VOCABULARIES)[number];
export type ForeignVocabulary = Exclude<CarrierVocabulary, 'service'>;

/** What one foreign status means to the service; `undefined` in the table = refused (400 naming `status`). */
export interface MappedStatus {
  status: DispatchStatus;
  /** Only for `exception`: the reason the status implies (a `reason` in the body overrides it). */
  reason?: Exclude<ExceptionReason, 'overdue'>;
}

type Table<S extends string> = Record<S, MappedStatus | undefined>;

/**
 * THE table. Why each line:
 * - `pre_transit` / `pending`: a label exists, the card has not left → `dispatched` (the state a
 *   registration starts in; such an event changes nothing once the card has moved on, effect `backward`).
 * - `available_for_pickup`: the card waits at a pickup point because it could not be handed over →
 *   `exception` `failed_attempt` (the cardholder must act; `ContactSupport` is the right suggestion).
 * - `return_to_sender` / `returned` → `exception` `returned`.
 * - `failure`: the shipment failed without saying how → `exception` `other`.
 * - `cancelled` / `canceled`: the shipment will not arrive → `exception` `other`.
 * - EasyPost `unknown` and `error` say nothing about the card: refused.
 */
export const VOCABULARY_TABLE: {
  easypost: Table<(typeof EASYPOST_STATUSES)[number]>;
  stripe_issuing: Table<(typeof STRIPE_ISSUING_STATUSES)[number]>;
} = {
  easypost: {
    unknown: undefined,
    pre_transit: { status: 'dispatched' },
    in_transit: { status: 'in_transit' },
    out_for_delivery: { status: 'out_for_delivery' },
    delivered: { status: 'delivered' },
    available_for_pickup: { status: 'exception', reason: 'failed_attempt' },
    return_to_sender: { status: 'exception', reason: 'returned' },
    failure: { status: 'exception', reason: 'other' },
    cancelled: { status: 'exception', reason: 'other' },
    error: undefined,
  },
  stripe_issuing: {
    pending: { status: 'dispatched' },
    shipped: { status: 'in_transit' },
    delivered: { status: 'delivered' },
    returned: { status: 'exception', reason: 'returned' },
    failure: { status: 'exception', reason: 'other' },
    canceled: { status: 'exception', reason: 'other' },
  },
};

/** The statuses a vocabulary knows, whether or not they map to something. */
export function vocabularyStatuses(vocabulary: ForeignVocabulary): readonly string[] {
  return Object.keys(VOCABULARY_TABLE[vocabulary]);
}

export type VocabularyMapping = { ok: true; mapped: MappedStatus } | { ok: false; problem: string };

/** The service's status (and reason) for a foreign status, or why it cannot be taken. */
export function mapVocabularyStatus(vocabulary: ForeignVocabulary, status: string): VocabularyMapping {
  const table: Record<string, MappedStatus | undefined> = VOCABULARY_TABLE[vocabulary];
  if (!Object.hasOwn(table, status)) {
    return { ok: false, problem: `not a ${vocabulary} status; expected one of ${vocabularyStatuses(vocabulary).join(', ')}` };
  }
  const mapped = table[status];
  if (!mapped) return { ok: false, problem: `${vocabulary} status "${status}" says nothing about where the card is; it is not accepted` };
  return { ok: true, mapped };
}
