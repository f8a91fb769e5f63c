// The wire contract of the service as zod schemas: the spec's status record, registration, carrier
// events and error body (DESIGN.md §3). Types are inferred from these; the OpenAPI document is
// generated from them, so the code, the docs and the webhook consumer kit cannot drift apart.
import { z } from 'zod';
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
/** Reasons the service decides itself (DESIGN §6 "Overdue cards"); a carrier cannot send them. */
export const SERVICE_EXCEPTION_REASONS = ['overdue'] as const;
/** Every reason a dispatch in exception can hold: the carrier's (`carrierEventBody.reason`) and the service's. */
export type ExceptionReason = z.infer<typeof exceptionReason> | (typeof SERVICE_EXCEPTION_REASONS)[number];

// Patterns here are also the OpenAPI document's (api/openapi.ts), read by generated clients and by
// validators in other languages: they use neither flags nor \d, \s or \w (whose meaning differs
// between regex engines), so every engine accepts exactly what the server accepts.

/** A UUID of version 4 (RFC 9562 variant), any letter case. */
export const UUID_V4 = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;
export const uuidV4 = z.string().regex(UUID_V4, 'must be a UUID v4');

const ZOD_DATETIME = z.iso.datetime({ offset: true });
/**
 * ISO 8601 (RFC 3339) timestamp with a time zone: Z or any ±hh:mm offset up to ±23:59, which the
 * service turns into UTC before anything else sees it (Postgres itself takes no offset beyond ±15:59).
 */
export const isoTimestamp = ZOD_DATETIME.meta({ override: { pattern: ZOD_DATETIME.def.checks?.length ? undefined : undefined } });
/** ISO 8601 calendar date without time, e.g. 2026-11-24. */
export const isoDate = z.iso.date();

export const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
  .transform((code) => code.toUpperCase())
  .refine((code) => isAssignedRegion(code), 'must be an assigned ISO 3166-1 alpha-2 country code');

function isAssignedRegion(code: string): boolean {
  // Intl knows the assigned ISO 3166-1 regions; unknown codes come back unchanged.
  const name = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' }).of(code);
  return name !== undefined && code !== 'ZZ';
}

/** BCP 47 language tag, canonicalised (e.g. `fr-ca` → `fr-CA`). */
export const localeTag = z
  .string()
  .min(2)
  .max(35)
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
    postal_code: z.string().trim().min(1).max(16),
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
    dispatch_date: isoTimestamp.optional(),
    destination,
    locale: localeTag.optional(),
    carrier: z.string().min(1).max(100).optional(),
    tracking_number: z.string().min(1).max(100).optional(),
    reference: z.string().min(1).max(200).optional(),
  })
  .strict()
  .meta({ id: 'DispatchRegistration' });
export type RegistrationBody = z.input<typeof registrationBody>;
export type Registration = z.output<typeof registrationBody>;

// ---------- POST /v1/dispatches/{id}/events ----------

export const carrierEventBody = z
  .object({
    status: dispatchStatus,
    occurred_at: isoTimestamp,
    event_id: z.string().min(1).max(200).optional(),
    reason: exceptionReason.optional(),
    location: z.string().min(1).max(200).optional(),
  })
  .strict()
  .meta({ id: 'CarrierEvent' });
export type CarrierEventBody = z.output<typeof carrierEventBody>;

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
    created_before: isoTimestamp.optional().meta({ description: 'only dispatches registered before this instant' }),
    limit: z
      .string()
      .regex(/^\d{1,6}$/, 'must be a whole number')
      .transform(Number)
      .pipe(z.number().min(1).max(LIST_LIMIT_MAX))
      .optional()
      .meta({ description: `page size, 1–${LIST_LIMIT_MAX} (default ${LIST_LIMIT_DEFAULT})` }),
    cursor: z.string().min(1).max(200).optional().meta({ description: 'the `next_cursor` of the previous page (opaque)' }),
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
