// GET /v1/openapi.json: the OpenAPI 3.1 document, generated from the same zod schemas that validate
// requests (domain/*-schemas.ts, the lists of names in domain/vocabulary.ts), so the docs cannot
// drift from the code. Its `webhooks`
// (api/openapi-webhook-requests.ts) describe the requests the service sends; GET /docs renders it.
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { z } from 'zod';
import {
  BATCH_MAX_ITEMS,
  batchBody,
  batchResults,
  dispatchList,
  dispatchListQuery,
  errorBody,
  registrationBody,
  statusRecord,
} from '../domain/dispatch-schemas.js';
import { localeTag, uuidV4 } from '../domain/field-schemas.js';
import { DISPATCH_DATE_RULE } from '../domain/input-bounds.js';
import { carrierEventPaths } from './openapi-carrier-events.js';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN, REPLAYED_HEADER } from './idempotency.js';
import { webhookRequests } from './openapi-webhook-requests.js';
import { webhookPaths } from './openapi-webhooks.js';
import { trackingPaths } from './openapi-tracking.js';
import { erasurePaths } from './openapi-erasures.js';
import { trackingFeedPaths } from './openapi-tracking-feeds.js';
import { BODY_LIMIT } from './middleware/json-body.js';
import { BATCH_BODY_LIMIT } from './routes/batch.js';
import { MAX_STATUS_AGE_SECONDS } from './status-read.js';

const rateLimitHeaders = z.object({
  'X-RateLimit-Limit': z.string().meta({ description: 'requests allowed per one-minute window for the key', example: '1000' }),
  'X-RateLimit-Remaining': z.string().meta({ description: 'requests left in the current window', example: '998' }),
  'X-RateLimit-Reset': z.string().meta({ description: 'end of the current window, UTC epoch seconds', example: '1795000020' }),
  'X-Request-Id': z.string().meta({ description: 'id of this request; quote it to support' }),
});
const retryAfter = rateLimitHeaders.extend({
  'Retry-After': z.string().meta({ description: 'whole seconds until the window resets', example: '17' }),
});

/** A 503's: its window's X-RateLimit-* too once the request was counted (not when its key could not even be looked up). */
const unavailableHeaders = z.object({
  'Retry-After': z.string().meta({ description: 'whole seconds to wait before retrying', example: '5' }),
  ...Object.fromEntries(
    Object.entries(rateLimitHeaders.shape).map(([name, header]) => [name, name === 'X-Request-Id' ? header : header.optional()]),
  ),
});

const json = (schema: z.ZodType) => ({ 'application/json': { schema } });
const error = (description: string, headers: z.ZodObject = rateLimitHeaders) => ({ description, headers, content: json(errorBody) });

const commonErrors: ZodOpenApiResponsesObject = {
  '401': error('missing, malformed, unknown or revoked API key (`unauthorized`)'),
  '429': error('more requests this minute than the key may make (`rate_limit_exceeded`); a refused request does not count', retryAfter),
  '500': error('unexpected server error (`internal_error`); the body carries `request_id`'),
  '503': error(
    'Postgres or the workflow service is unreachable, or did not answer in time (`service_unavailable`): send the request ' +
      'again after `Retry-After` seconds',
    unavailableHeaders,
  ),
};
const bodyErrors = (limit = BODY_LIMIT): ZodOpenApiResponsesObject => ({
  '400': error('invalid JSON or a field that fails validation; the message names the field (`bad_request`)'),
  '413': error(`body larger than ${limit} (\`payload_too_large\`)`),
  '415': error('body not sent as application/json in UTF-8 (`unsupported_media_type`; any charset but utf-8 is refused, naming it)'),
});
const idempotencyKeyHeader = z.object({
  [IDEMPOTENCY_HEADER]: z
    .string()
    .regex(new RegExp(IDEMPOTENCY_KEY_PATTERN), 'must be 1 to 255 printable ASCII characters')
    .optional()
    .meta({
      description:
        'makes a retry safe: within 24 hours the same key with the same body replays the first response (with ' +
        '`Idempotent-Replayed: true`), with another body it is a 409; keys belong to the issuer and mode of the API key. ' +
        'Sent once (twice → 400)',
      example: 'order-4711',
    }),
});
const replayed = {
  [REPLAYED_HEADER]: z.literal('true').optional().meta({ description: 'present on a response replayed for an `Idempotency-Key`' }),
};
const idempotencyConflict =
  'the `Idempotency-Key` was used in the last 24 hours with another body, or a request with it is still in progress (`conflict`; then with `Retry-After`)';
const conflictHeaders = rateLimitHeaders.extend({
  'Retry-After': z.string().optional().meta({
    description: 'on a request still in progress under the same `Idempotency-Key`: whole seconds after which to retry',
    example: '10',
  }),
});
const dispatchId = z.object({
  id: uuidV4.meta({ description: 'dispatch id, a UUID v4', example: '7d3c1a52-1f3e-4c55-9a57-0f6a9c1d2b11' }),
});

// Caching for pollers (api/status-read.ts): the tag and how long the record may be kept, on a 200 and a 304.
const cachingHeaders = rateLimitHeaders.extend({
  ETag: z.string().meta({
    description: 'weak entity tag of this answer: the projection version and the locale it is rendered in',
    example: 'W/"3-default"',
  }),
  'Cache-Control': z.string().meta({
    description: `\`private, max-age=N\`: N seconds until the next prediction refresh could change the record (1 to ${MAX_STATUS_AGE_SECONDS})`,
    example: 'private, max-age=1740',
  }),
});

const getStatus: ZodOpenApiOperationObject = {
  operationId: 'getDispatchStatus',
  summary: 'The delivery status record of one dispatched card',
  description:
    'Pollers send the `ETag` of their last answer as `If-None-Match`: while the record has not changed the answer is a ' +
    '304 without a body, counted by the rate limit like any read.',
  security: [{ bearerAuth: [] }],
  requestParams: {
    path: dispatchId,
    query: z.object({
      locale: localeTag.optional().meta({ description: 'BCP 47 tag: render ui_suggestion in this language', example: 'fr-FR' }),
    }),
    header: z.object({
      'If-None-Match': z.string().optional().meta({
        description: 'entity tags of records the client holds (a list, or `*`), compared weakly (RFC 9110)',
        example: 'W/"3-default"',
      }),
    }),
  },
  responses: {
    '200': { description: 'the status record', headers: cachingHeaders, content: json(statusRecord) },
    '304': { description: '`If-None-Match` names the current tag (or is `*`): the record is unchanged; no body', headers: cachingHeaders },
    '400': error('`id` is not a UUID v4, or `locale` is not a BCP 47 tag (`bad_request`)'),
    '403': error('the dispatch belongs to another issuer, or the key lacks `status:read` (`forbidden`)'),
    '404': error(
      'no dispatch with this id for this key (`not_found`); a new dispatch may take up to 60 s to appear; an erased one says when it was erased',
    ),
    ...commonErrors,
  },
};

const register: ZodOpenApiOperationObject = {
  operationId: 'registerDispatch',
  summary: 'Register a dispatch so tracking begins (idempotent by id, and by Idempotency-Key)',
  security: [{ bearerAuth: [] }],
  requestParams: { header: idempotencyKeyHeader },
  requestBody: { required: true, content: json(registrationBody) },
  responses: {
    '200': {
      description: 'already registered with the same body: the current record',
      headers: rateLimitHeaders.extend(replayed),
      content: json(statusRecord),
    },
    '201': {
      description: 'registered; queryable at once',
      headers: rateLimitHeaders.extend({
        Location: z.string().meta({ example: '/v1/status/7d3c1a52-1f3e-4c55-9a57-0f6a9c1d2b11' }),
        ...replayed,
      }),
      content: json(statusRecord),
    },
    ...bodyErrors(),
    '400': error(
      `invalid JSON or a field that fails validation (\`dispatch_date\` ${DISPATCH_DATE_RULE}); ` +
        'the message names the field (`bad_request`)',
    ),
    '403': error('the key lacks `dispatches:write` (`forbidden`)'),
    '409': error(
      `the id was registered with a different body, or by another issuer, or was erased; or ${idempotencyConflict}`,
      conflictHeaders,
    ),
    ...commonErrors,
  },
};

const listDispatches: ZodOpenApiOperationObject = {
  operationId: 'listDispatches',
  summary: "The caller's dispatches, newest first, a page at a time",
  description:
    "Only dispatches of the key's issuer and mode (a test key lists only test-mode dispatches). Pagination is by " +
    'cursor, stable while dispatches are added: pass `next_cursor` as `cursor` with the same filters until it is null.',
  security: [{ bearerAuth: [] }],
  requestParams: { query: dispatchListQuery },
  responses: {
    '200': { description: 'one page of status records', headers: rateLimitHeaders, content: json(dispatchList) },
    '400': error('a parameter is invalid, repeated or unknown; the message names it (`bad_request`)'),
    '403': error('the key lacks `status:read` (`forbidden`)'),
    ...commonErrors,
  },
};

const registerBatch: ZodOpenApiOperationObject = {
  operationId: 'registerDispatchBatch',
  summary: `Register up to ${BATCH_MAX_ITEMS} dispatches in one call`,
  description:
    'Each item is registered exactly as `POST /v1/dispatches` would (same validation, idempotent by id); one bad item ' +
    "never fails the others. Rate limit: a batch counts as one request per item; items beyond what the key's window " +
    'allows are not attempted and report `rate_limit_exceeded` (and the response carries `Retry-After`). With an ' +
    '`Idempotency-Key`, the response is replayed for the same key and body, unless an item was not attempted or failed ' +
    'with a 5xx error (then the same key may be sent again).',
  security: [{ bearerAuth: [] }],
  requestParams: { header: idempotencyKeyHeader },
  requestBody: { required: true, content: json(batchBody) },
  responses: {
    '200': { description: 'one result per item, in input order', headers: rateLimitHeaders.extend(replayed), content: json(batchResults) },
    ...bodyErrors(BATCH_BODY_LIMIT),
    '400': error(`not \`{ "dispatches": [...] }\` with 1–${BATCH_MAX_ITEMS} items (\`bad_request\`); an invalid item is reported in its result`), // prettier-ignore
    '403': error('the key lacks `dispatches:write` (`forbidden`)'),
    '409': error(idempotencyConflict, conflictHeaders),
    ...commonErrors,
  },
};

let cached: string | undefined;

/** The document as JSON text, built once per process. */
export function openApiJson(): string {
  cached ??= JSON.stringify(
    createDocument({
      openapi: '3.1.0',
      info: {
        title: 'Card Delivery Status Service',
        version: '1.0.0',
        description:
          'Tracks payment cards from dispatch to delivery. Every /v1 response carries X-Request-Id and the ' +
          'X-RateLimit-* headers (fixed one-minute windows per API key; per client IP without a valid key). ' +
          'Errors are `{ error, message }`; 5xx errors add `request_id`.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'cds_live_… / cds_test_… API key',
            description: '`Authorization: Bearer <API_KEY>`: one space, no whitespace around the key.',
          },
        },
      },
      paths: {
        '/v1/status/{id}': { get: getStatus },
        '/v1/dispatches': { get: listDispatches, post: register },
        '/v1/dispatches/batch': { post: registerBatch },
        ...carrierEventPaths(
          { json, error: (description) => error(description), commonErrors, bodyErrors: () => bodyErrors(), rateLimitHeaders },
          dispatchId,
        ),
        ...webhookPaths({
          json,
          error: (description) => error(description),
          commonErrors,
          bodyErrors: () => bodyErrors(),
          rateLimitHeaders,
        }),
        ...trackingPaths({
          json,
          error: (description) => error(description),
          commonErrors,
          bodyErrors: () => bodyErrors(),
          rateLimitHeaders,
        }),
        ...erasurePaths(
          { json, error: (description) => error(description), commonErrors, bodyErrors: () => bodyErrors(), rateLimitHeaders },
          dispatchId,
        ),
        ...trackingFeedPaths({
          json,
          error: (description) => error(description),
          commonErrors,
          bodyErrors: () => bodyErrors(),
          rateLimitHeaders,
        }),
      },
      webhooks: webhookRequests(),
    }),
  );
  return cached;
}
