// The wire contract of dispatches as zod schemas: the status record (GET /v1/status/{id}),
// registration (one and a batch), the list of dispatches and the error body (docs/http-contract.md).
// Types are inferred from these; the OpenAPI document is generated from them, so the code, the docs
// and the webhook consumer kit cannot drift apart. The fields they are built from are in
// domain/field-schemas.ts, the lists of names in domain/vocabulary.ts.
import { z } from 'zod';
import { countryCode, cursorParam, destination, isoDate, isoTimestamp, listLimit, localeTag, plainText, uuidV4 } from './field-schemas.js';
import { DISPATCH_DATE_RULE } from './input-bounds.js';
import { confidenceLevel, dispatchStatus, recommendedAction } from './vocabulary.js';

// ---------- the dispatch status record (response of GET /v1/status/{id}) ----------

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
      description: `when the card left; for a new dispatch it ${DISPATCH_DATE_RULE} (else 400), the same id and body again is 200 however old it is. Default: now`,
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

/** The list's query string. Unknown parameters are refused (a misspelt filter must not list everything). */
export const dispatchListQuery = z
  .object({
    status: dispatchStatus.optional().meta({ description: 'only dispatches currently in this status' }),
    country_code: countryCode.optional().meta({ description: 'only dispatches to this destination country (ISO 3166-1 alpha-2)' }),
    created_after: isoTimestamp.optional().meta({ description: 'only dispatches registered at or after this instant' }),
    created_before: isoTimestamp.optional().meta({ description: 'only dispatches registered before this instant; must be later than created_after' }), // prettier-ignore
    limit: listLimit,
    cursor: cursorParam,
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
