// The wire contract of the service as zod schemas: the spec's status record, registration, carrier
// events and error body (docs/http-contract.md). Types are inferred from these; the OpenAPI document is
// generated from them, so the code, the docs and the webhook consumer kit cannot drift apart.
import { z } from 'zod';
import { CARRIER_VOCABULARIES, mapVocabularyStatus, vocabularyStatuses, type ForeignVocabulary } from './carrier-vocabularies.js';
import { DISPATCH_DATE_RULE, OCCURRED_AT_RULE } from './input-bounds.js';

export const DISPATCH_STATUSES = ['dispatched', 'in_transit', 'out_for_delivery', 'delivered', 'exception'] as const;
export const dispatchStatus = z.enum(DISPATCH_STATUSES).meta({ id: 'DispatchStatus' });
export type DispatchStatus = z.infer<typeof dispatchStatus>;

export const CONFIDENCE_LEVELS = ['High', 'Medium', 'Low'] as const;
export const confidenceLevel = z.enum(CONFIDENCE_LEVELS);
export type ConfidenceLevel = z.infer<typeof confidenceLevel>;

export const RECOMMENDED_ACTIONS = ['None', 'Activate', 'ContactSupport'] as const;
export const recommendedAction = z.enum(RECOMMENDED_ACTIONS);
export type RecommendedAction = z.infer<typeof recommendedAction>;

export const EXCEPTION_REASONS = ['failed_attempt', 'postal_delay', 'address_issue', 'damaged', 'lost', 'returned', 'other'] as const;
export const exceptionReason = z.enum(EXCEPTION_REASONS);
/** Reasons the service decides itself (docs/states.md "Overdue"); a carrier cannot send them. */
export const SERVICE_EXCEPTION_REASONS = ['overdue'] as const;
/** Every reason a dispatch in exception can hold: the carrier's (`carrierEventBody.reason`) and the service's. */
export type ExceptionReason = z.infer<typeof exceptionReason> | (typeof SERVICE_EXCEPTION_REASONS)[number];

// Patterns here are also the OpenAPI document's (api/openapi.ts), read by generated clients and by
// validators in other languages: they use neither flags nor \d, \s or \w (whose meaning differs
// between regex engines), so every engine accepts exactly what the server accepts.

/** A UUID of version 4 (RFC 9562 variant), any letter case. */
export const UUID_V4 = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;
export const uuidV4 = z.string().regex(UUID_V4, 'must be a UUID v4');

const zodDatetime = z.iso.datetime({ offset: true });
/**
 * ISO 8601 (RFC 3339) timestamp with a time zone: Z or any ±hh:mm offset up to ±23:59. Callers turn
 * it into UTC (`toUtc`) before it goes anywhere else: Postgres takes no offset beyond ±15:59.
 */
export const isoTimestamp = zodDatetime.meta({ pattern: asciiDigits(zodDatetime._zod.pattern!.source) });

/** The same instant in UTC (`…Z`, milliseconds); years before 0001 or after 9999 come out in extended form. */
export const toUtc = (timestamp: string) => new Date(timestamp).toISOString();

function asciiDigits(pattern: string): string {
  return pattern.replaceAll('\\d', '[0-9]');
}

/** C0 controls, DEL and C1 controls: refused in every string field (Postgres cannot store NUL in text). */
const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';
const CONTROL_CHARACTER_MESSAGE = 'must not contain control characters (U+0000–U+001F, U+007F–U+009F)';
/** What String.prototype.trim() removes (ECMAScript WhiteSpace and LineTerminator), as a class body. */
const TRIMMED = '\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

const codePoints = (text: string) => [...text].length;

/**
 * Free text of `min`–`max` characters without control characters. The length is counted in
 * characters (code points), as JSON Schema's minLength/maxLength count them, not in UTF-16 units.
 * With `visible`, it must hold a character that trim() keeps, and it is trimmed.
 */
export function plainText(min: number, max: number, options: { visible?: boolean } = {}) {
  const pattern = options.visible
    ? `^[^\\u0000-\\u001f\\u007f-\\u009f]*[^${TRIMMED}][^\\u0000-\\u001f\\u007f-\\u009f]*$`
    : NO_CONTROL_CHARACTERS;
  const text = z
    .string()
    .regex(new RegExp(NO_CONTROL_CHARACTERS, 'u'), CONTROL_CHARACTER_MESSAGE)
    .refine((value) => codePoints(value) >= min && codePoints(value) <= max, `must be ${min} to ${max} characters long`)
    .refine((value) => !options.visible || value.trim() !== '', 'must not be blank')
    .meta({ minLength: min, maxLength: max, pattern });
  return options.visible ? text.transform((value) => value.trim()) : text;
}
/** ISO 8601 calendar date without time, e.g. 2026-11-24. */
export const isoDate = z.iso.date();

/** The assigned ISO 3166-1 alpha-2 codes, as Intl knows them (unknown codes have no name; ZZ is "unknown region"). */
export const ASSIGNED_COUNTRY_CODES: readonly string[] = (() => {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  return [...letters].flatMap((a) => [...letters].map((b) => a + b)).filter((code) => code !== 'ZZ' && names.of(code) !== undefined);
})();
const assignedCountryCodes = new Set(ASSIGNED_COUNTRY_CODES);

/** Any letter case: each code as `[Ff][Rr]`, so that the document states exactly what the server takes. */
const COUNTRY_CODE_PATTERN = `^(?:${ASSIGNED_COUNTRY_CODES.map((code) => [...code].map((c) => `[${c}${c.toLowerCase()}]`).join('')).join('|')})$`;

export const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
  .transform((code) => code.toUpperCase())
  .refine((code) => assignedCountryCodes.has(code), 'must be an assigned ISO 3166-1 alpha-2 country code')
  .meta({
    pattern: COUNTRY_CODE_PATTERN,
    description: 'an assigned ISO 3166-1 alpha-2 country code, in any letter case (stored upper-cased)',
    example: 'FR',
  });

/**
 * The BCP 47 tags taken (UTS 35 Unicode locale identifiers, the syntax Intl implements): a language of
 * 2–3 or 5–8 letters, an optional script, region and variant, and an optional `-u-` extension of
 * keywords. Only what the syntax alone decides: two variants or two extensions are left out, since
 * Intl refuses a repeated one.
 */
const BCP47_PATTERN =
  '^(?:[A-Za-z]{2,3}|[A-Za-z]{5,8})(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))?' +
  '(?:-[Uu](?:-[A-Za-z0-9][A-Za-z](?:-[A-Za-z0-9]{3,8})*)+)?$';

/** BCP 47 language tag, canonicalised (e.g. `fr-ca` → `fr-CA`). */
export const localeTag = z
  .string()
  .min(2)
  .max(35)
  .regex(new RegExp(BCP47_PATTERN), 'must be a BCP 47 language tag, e.g. en-GB')
  .meta({ pattern: BCP47_PATTERN, description: 'a BCP 47 language tag, e.g. en-GB', example: 'en-GB' })
  .transform((tag, ctx) => {
    try {
      return Intl.getCanonicalLocales(tag)[0];
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a BCP 47 language tag, e.g. en-GB' });
      return z.NEVER;
    }
  });

export const destination = z
  .object({
    postal_code: plainText(1, 16, { visible: true }),
    country_code: countryCode,
  })
  .strict();

// ---------- the spec's dispatch status record (response of GET /v1/status/{id}) ----------

export const statusRecord = z
  .object({
    id: z.string().uuid(),
    status: dispatchStatus,
    dispatch_date: isoTimestamp,
    destination: z.object({ postal_code: z.string(), country_code: z.string().length(2) }).strict(),
    prediction: z
      .object({
        delivery_window: z.object({ min: isoDate, max: isoDate }).strict(),
        confidence_level: confidenceLevel,
      })
      .strict(),
    ui_suggestion: z
      .object({
        locale: z.string(),
        recommended_message: z.string().min(1),
        recommended_action: recommendedAction,
      })
      .strict(),
  })
  .strict()
  .meta({ id: 'DispatchStatusRecord' });
export type StatusRecord = z.infer<typeof statusRecord>;

// ---------- POST /v1/dispatches ----------

export const registrationBody = z
  .object({
    id: uuidV4.optional().transform((id) => id?.toLowerCase()),
    dispatch_date: isoTimestamp.optional().meta({
      description: `when the card left; ${DISPATCH_DATE_RULE} (else 400). Default: now`,
    }),
    destination,
    locale: localeTag.optional(),
    carrier: plainText(1, 100).optional(),
    tracking_number: plainText(1, 100).optional(),
    reference: plainText(1, 200).optional(),
  })
  .strict()
  .meta({ id: 'DispatchRegistration' });
export type RegistrationBody = z.input<typeof registrationBody>;
export type Registration = z.output<typeof registrationBody>;

// ---------- POST /v1/dispatches/{id}/events ----------

export const carrierEventBody = z
  .object({
    status: dispatchStatus,
    occurred_at: isoTimestamp.meta({ description: `when the carrier saw it; ${OCCURRED_AT_RULE} (else 400)` }),
    event_id: plainText(1, 200).optional(),
    reason: exceptionReason.optional(),
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

// ---------- errors ----------

export const ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limit_exceeded',
  'internal_error',
  'service_unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const errorBody = z
  .object({
    error: z.enum(ERROR_CODES),
    message: z.string(),
    request_id: z.string().optional().meta({ description: 'present on 5xx responses, quote it to support' }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof errorBody>;

// ---------- GET /v1/dispatches ----------

export const LIST_LIMIT_MAX = 100;
export const LIST_LIMIT_DEFAULT = 20;

/** The list's query string. Unknown parameters are refused (a misspelt filter must not list everything). */
export const dispatchListQuery = z
  .object({
    status: dispatchStatus.optional().meta({ description: 'only dispatches currently in this status' }),
    country_code: countryCode.optional().meta({ description: 'only dispatches to this destination country (ISO 3166-1 alpha-2)' }),
    created_after: isoTimestamp.optional().meta({ description: 'only dispatches registered at or after this instant' }),
    created_before: isoTimestamp.optional().meta({ description: 'only dispatches registered before this instant; must be later than created_after' }), // prettier-ignore
    limit: z
      .string()
      .regex(/^[0-9]{1,6}$/, 'must be a whole number')
      .transform(Number)
      .pipe(z.number().min(1).max(LIST_LIMIT_MAX))
      .optional()
      .meta({
        description: `page size, 1–${LIST_LIMIT_MAX} (default ${LIST_LIMIT_DEFAULT})`,
        // A query parameter is text on the wire; the document says what that text must be.
        override: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX, pattern: undefined },
      }),
    cursor: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,200}$/, 'not a cursor this API returned; pass next_cursor unchanged')
      .optional()
      .meta({ description: 'the `next_cursor` of the previous page, unchanged (opaque: only a cursor this API returned is valid)' }),
  })
  .strict()
  .refine((q) => !q.created_after || !q.created_before || Date.parse(q.created_after) < Date.parse(q.created_before), {
    path: ['created_before'],
    message: 'must be later than created_after',
  });

export const dispatchList = z
  .object({
    data: z.array(statusRecord).meta({ description: 'newest first' }),
    next_cursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next page; null on the last page' }),
  })
  .meta({ id: 'DispatchList' });

// ---------- POST /v1/dispatches/batch ----------

export const BATCH_MAX_ITEMS = 1000;

/** The batch envelope around any item schema: the route checks items one by one, the docs show registrations. */
export const batchOf = <Item extends z.ZodType>(item: Item) => z.object({ dispatches: z.array(item).min(1).max(BATCH_MAX_ITEMS) }).strict();

export const batchBody = batchOf(registrationBody).meta({ id: 'DispatchBatch' });

export const batchItemResult = z
  .object({
    index: z.number().int().min(0).meta({ description: "the item's position in `dispatches`" }),
    result: z.enum(['created', 'existing', 'error']),
    id: uuidV4.optional().meta({ description: 'the dispatch id, when known' }),
    error: z
      .object({ error: z.enum(ERROR_CODES), message: z.string() })
      .optional()
      .meta({ description: 'only for `result: "error"`: what POST /v1/dispatches would have answered' }),
  })
  .meta({ id: 'DispatchBatchItemResult' });
export type BatchItemResult = z.infer<typeof batchItemResult>;

export const batchResults = z
  .object({ results: z.array(batchItemResult).meta({ description: 'one per item, in input order' }) })
  .meta({ id: 'DispatchBatchResults' });

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

export const EVENT_EFFECTS = [
  'applied',
  'exception_repeated',
  'stale',
  'backward',
  'unchanged',
  'after_delivery',
  'workflow_closed',
  'rejected',
] as const;

/** The list's query string; unknown parameters are refused, as for GET /v1/dispatches. */
export const carrierEventListQuery = z
  .object({
    limit: dispatchListQuery.shape.limit,
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
    reason: z
      .enum([...EXCEPTION_REASONS, ...SERVICE_EXCEPTION_REASONS])
      .nullable()
      .meta({ description: 'for an exception: its reason (`overdue` is decided by the service itself)' }),
    location: z.string().nullable(),
    event_id: z.string().nullable().meta({ description: "the carrier's event id, when it sent one" }),
    effect: z
      .enum(EVENT_EFFECTS)
      .nullable()
      .meta({ description: 'what the event did to the dispatch (docs/states.md); null until the workflow has folded it' }),
    original: z
      .object({ vocabulary: z.enum(['easypost', 'stripe_issuing']), status: z.string() })
      .strict()
      .nullable()
      .meta({ description: 'the status exactly as sent in a carrier vocabulary; null for the service vocabulary' }),
  })
  .strict()
  .meta({ id: 'CarrierEventRecord' });

export const carrierEventList = z
  .object({
    data: z.array(carrierEventRecord).meta({ description: 'in the order the service received them' }),
    next_cursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next page; null on the last page' }),
  })
  .meta({ id: 'CarrierEventList' });

/**
 * The `data` of a `webhook_endpoint.disabled` webhook (docs/webhooks.md "Auto-disable"): the endpoint
 * that was disabled, not a status record. Its envelope is otherwise the same `{ event, timestamp, data }`.
 */
export const endpointDisabledData = z
  .object({
    id: z.string().meta({ description: 'the disabled endpoint (`whe_…`)' }),
    url: z.string(),
    disabled_reason: z.enum(['failing']).meta({ description: '`failing`: every attempt failed for WEBHOOK_AUTO_DISABLE_AFTER (5 days)' }),
    disabled_at: isoTimestamp,
  })
  .strict()
  .meta({ id: 'WebhookEndpointDisabledData' });
export type EndpointDisabledData = z.infer<typeof endpointDisabledData>;
