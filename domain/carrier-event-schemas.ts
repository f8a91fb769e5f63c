// The wire contract of carrier events (docs/http-contract.md): the body of
// POST /v1/dispatches/{id}/events in the service's vocabulary or a carrier's, its answer, the test
// helpers that send one for a test-mode dispatch, and GET /v1/dispatches/{id}/events, the list of a
// dispatch's carrier events with their effect.
import { z } from 'zod';
import { mapVocabularyStatus, vocabularyStatuses, CARRIER_VOCABULARIES, type ForeignVocabulary } from './carrier-vocabularies.js';
import { isoTimestamp, listLimit, plainText } from './field-schemas.js';
import { OCCURRED_AT_RULE } from './input-bounds.js';
import { anyExceptionReason, dispatchStatus, eventEffect, exceptionReason } from './vocabulary.js';

// ---------- POST /v1/dispatches/{id}/events ----------
export const carrierEventBody = z
  .object({
    status: dispatchStatus,
    occurred_at: isoTimestamp.meta({ description: `when the carrier saw it; ${OCCURRED_AT_RULE} (else 400)` }),
    event_id: plainText(1, 200).optional(),
    reason: exceptionReason.optional().meta({
      description:
        "why the card is in exception: only with `status` `exception` (in a carrier's vocabulary, a status that becomes one), else 400. Default: `other`, or the reason the carrier's status implies",
    }),
    location: plainText(1, 200).optional(),
  })
  .strict();
export type CarrierEventBody = z.output<typeof carrierEventBody>;

/**
 * The body as the route takes it: the service's own vocabulary (`vocabulary` absent or "service"),
 * or a carrier's (domain/carrier-vocabularies.ts maps its status). One variant per vocabulary, each
 * strict, so that the route can pick the variant by `vocabulary` and name the failing field, and the
 * document (their union) says exactly what is taken. A carrier's status that says nothing about the
 * card (EasyPost's `unknown`, `error`) is in no variant: refused with 400 naming `status`.
 */
const carrierEventFields = carrierEventBody.omit({ status: true }).shape;
const vocabularyEvent = <V extends ForeignVocabulary>(
  vocabulary: V,
  statuses: readonly [string, ...string[]],
  id: string,
  description: string,
) =>
  z
    .object({
      vocabulary: z.literal(vocabulary),
      status: z.enum(statuses, { error: `must be one of ${statuses.join(', ')} (the ${vocabulary} statuses that say where the card is)` }),
      ...carrierEventFields,
    })
    .strict()
    .meta({ id, description });

export const CARRIER_EVENT_VARIANTS = {
  service: carrierEventBody
    .extend({ vocabulary: z.literal('service').optional() })
    .strict()
    .meta({
      id: 'CarrierEvent',
      description: "the service's own five states (the default vocabulary)",
    }),
  easypost: vocabularyEvent(
    'easypost',
    mappedStatuses('easypost'),
    'CarrierEventEasyPost',
    "an EasyPost tracker status, mapped to the service's states and exception reasons (EasyPost's `unknown` and `error` are refused)",
  ),
  stripe_issuing: vocabularyEvent(
    'stripe_issuing',
    mappedStatuses('stripe_issuing'),
    'CarrierEventStripeIssuing',
    "a Stripe Issuing card shipping status, mapped to the service's states and exception reasons",
  ),
} as const;

/** Which variant a body is read with; anything else in the body is checked by that variant. */
export const carrierEventVocabulary = z
  .object({ vocabulary: z.enum(CARRIER_VOCABULARIES).optional() })
  .loose()
  .transform((body) => body.vocabulary ?? 'service');

export const carrierEventRequest = z
  .union([CARRIER_EVENT_VARIANTS.service, CARRIER_EVENT_VARIANTS.easypost, CARRIER_EVENT_VARIANTS.stripe_issuing])
  .meta({ id: 'CarrierEventRequest' });

function mappedStatuses(vocabulary: ForeignVocabulary): [string, ...string[]] {
  const statuses = vocabularyStatuses(vocabulary).filter((status) => mapVocabularyStatus(vocabulary, status).ok);
  return [statuses[0], ...statuses.slice(1)];
}

export const carrierEventAccepted = z.object({ accepted: z.literal(true), duplicate: z.boolean() }).meta({ id: 'CarrierEventAccepted' });

// ---------- POST /v1/test_helpers/dispatches/{id}/{action} ----------

export const TEST_HELPER_ACTIONS = ['ship', 'out_for_delivery', 'deliver', 'fail', 'return'] as const;
export const testHelperAction = z.enum(TEST_HELPER_ACTIONS);
export type TestHelperAction = z.infer<typeof testHelperAction>;

/** Only `fail` takes a body; every other action takes none (or `{}`). */
export const testHelperFailBody = z
  .object({ reason: exceptionReason.default('failed_attempt') })
  .strict()
  .meta({ id: 'TestHelperFail' });
export const testHelperEmptyBody = z.object({}).strict();

// ---------- GET /v1/dispatches/{id}/events ----------

/** The list's query string; unknown parameters are refused, as for GET /v1/dispatches. */
export const carrierEventListQuery = z
  .object({
    limit: listLimit,
    cursor: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,1000}$/, 'not a cursor this API returned; pass next_cursor unchanged')
      .optional()
      .meta({ description: 'the `next_cursor` of the previous page, unchanged (opaque: only a cursor this API returned is valid)' }),
  })
  .strict();

export const carrierEventRecord = z
  .object({
    id: z.string().meta({ description: 'stable id of this carrier event (`cevt_…`)' }),
    status: dispatchStatus.meta({ description: "the service's status the event stands for" }),
    occurred_at: isoTimestamp.meta({ description: 'when the carrier saw it (UTC)' }),
    received_at: isoTimestamp.meta({ description: 'when the service received it (UTC, microseconds)' }),
    reason: anyExceptionReason
      .nullable()
      .meta({ description: 'for an exception: its reason (`overdue` is decided by the service itself)' }),
    location: z.string().nullable(),
    event_id: z.string().nullable().meta({ description: "the carrier's event id, when it sent one" }),
    effect: eventEffect
      .nullable()
      .meta({ description: 'what the event did to the dispatch (docs/states.md); null until the workflow has folded it' }),
    original: z
      .object({
        vocabulary: z.enum(['easypost', 'stripe_issuing', 'aftership', 'shippo', 'ship24']),
        status: z.string(),
        substatus: z.string().optional().meta({ description: "a tracking feed's provider sub-status, when it sent one" }),
        time: z.string().optional().meta({ description: "a tracking feed's checkpoint time exactly as the provider wrote it" }),
      })
      .strict()
      .nullable()
      .meta({
        description:
          'the status exactly as sent in a carrier vocabulary or by a tracking feed (docs/tracking-feeds.md); null for the service vocabulary',
      }),
  })
  .strict()
  .meta({ id: 'CarrierEventRecord' });

export const carrierEventList = z
  .object({
    data: z.array(carrierEventRecord).meta({ description: 'in the order the service received them' }),
    next_cursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next page; null on the last page' }),
  })
  .meta({ id: 'CarrierEventList' });
