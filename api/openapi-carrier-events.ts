// The OpenAPI operations of carrier events (api/routes/carrier-events.ts: POST and GET
// /v1/dispatches/{id}/events) and of the test helpers that send one for a test-mode dispatch
// (api/routes/test-helpers.ts), from the zod schemas those routes validate with
// (domain/carrier-event-schemas.ts). api/openapi.ts adds them to its document with its own response
// helpers and its path parameter of a dispatch id.
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import type { z } from 'zod';
import {
  carrierEventAccepted,
  carrierEventList,
  carrierEventListQuery,
  carrierEventRequest,
  testHelperAction,
  testHelperEmptyBody,
  testHelperFailBody,
} from '../domain/carrier-event-schemas.js';
import { statusRecord } from '../domain/dispatch-schemas.js';
import { OCCURRED_AT_RULE } from '../domain/input-bounds.js';
import { EVENT_EFFECTS } from '../domain/vocabulary.js';
import type { OpenApiHelpers } from './openapi-webhooks.js';

export function carrierEventPaths(h: OpenApiHelpers, dispatchId: z.ZodObject): ZodOpenApiPathsObject {
  const { json, error, commonErrors, bodyErrors, rateLimitHeaders } = h;

  const postEvent: ZodOpenApiOperationObject = {
    operationId: 'postCarrierEvent',
    summary: 'Report a carrier status event for a dispatch',
    security: [{ bearerAuth: [] }],
    requestParams: { path: dispatchId },
    description:
      "`vocabulary` (default `service`) says whose statuses `status` holds: the service's five states, EasyPost tracker " +
      "statuses (`easypost`) or Stripe Issuing card shipping statuses (`stripe_issuing`), mapped to the service's state and " +
      'exception reason by one table (docs/carrier-events.md "Carrier vocabularies"); a `reason` in the body overrides the ' +
      "mapped one. A status that says nothing about the card (EasyPost's `unknown`, `error`) is refused (400).",
    requestBody: { required: true, content: json(carrierEventRequest) },
    responses: {
      '202': {
        description: 'accepted; `duplicate` is true for a repeat (same event_id, or same status and occurred_at), which has no effect',
        headers: rateLimitHeaders,
        content: json(carrierEventAccepted),
      },
      ...bodyErrors(),
      '400': error(
        `invalid JSON or a field that fails validation (\`occurred_at\` ${OCCURRED_AT_RULE}); ` +
          'the message names the field (`bad_request`)',
      ),
      '403': error('the dispatch belongs to another issuer, or the key lacks `events:write` (`forbidden`)'),
      '404': error('no dispatch with this id for this key, or it was erased (`not_found`; the message says when)'),
      '409': error(
        "the dispatch's workflow has closed without delivery (terminated by an operator, or failed): the event is recorded with effect " +
          '`workflow_closed` but changes nothing (`conflict`)',
      ),
      ...commonErrors,
    },
  };

  const listCarrierEvents: ZodOpenApiOperationObject = {
    operationId: 'listCarrierEvents',
    summary: "A dispatch's carrier events, in the order they arrived, with what each did",
    description:
      `\`effect\` says what the event did to the dispatch (${EVENT_EFFECTS.map((effect) => `\`${effect}\``).join(', ')}), ` +
      'null until the workflow has folded it. Pagination ' +
      'is by cursor: pass `next_cursor` as `cursor` until it is null.',
    security: [{ bearerAuth: [] }],
    requestParams: { path: dispatchId, query: carrierEventListQuery },
    responses: {
      '200': { description: 'one page of carrier events', headers: rateLimitHeaders, content: json(carrierEventList) },
      '400': error('`id` is not a UUID v4, or a parameter is invalid, repeated or unknown; the message names it (`bad_request`)'),
      '403': error('the dispatch belongs to another issuer, or the key lacks `status:read` (`forbidden`)'),
      '404': error("no dispatch with this id in this key's mode (`not_found`)"),
      ...commonErrors,
    },
  };

  const testHelperResponses = {
    '200': { description: 'the updated status record', headers: rateLimitHeaders, content: json(statusRecord) },
    ...bodyErrors(),
    '400': error('`id` is not a UUID v4, `action` is unknown, or the body is invalid (`bad_request`)'),
    '403': error("a live key, one without `events:write`, or another issuer's dispatch (`forbidden`)"),
    '404': error('no test-mode dispatch with this id (`not_found`)'),
    '409': error('the state machine would ignore this action, e.g. `deliver` on a delivered dispatch (`conflict`)'),
    ...commonErrors,
  };

  // One path on the server; two operations in the document, because only `fail` takes a body: a
  // generated client or fuzzer must not send `{ "reason" }` to the other actions (they refuse it).
  const testHelper: ZodOpenApiOperationObject = {
    operationId: 'advanceTestDispatch',
    summary: 'Test mode: move a test dispatch on as a carrier event would',
    description:
      '`ship` → in_transit, `out_for_delivery`, `deliver` → delivered, `return` → exception with reason `returned` ' +
      "(no body, or `{}`). Webhooks fire to the issuer's test endpoints as for a carrier event; the answer comes once the " +
      'status record shows the change. `fail` has its own operation.',
    security: [{ bearerAuth: [] }],
    requestParams: {
      path: dispatchId.extend({ action: testHelperAction.exclude(['fail']).meta({ description: 'what happens to the card' }) }),
    },
    requestBody: { required: false, content: json(testHelperEmptyBody) },
    responses: testHelperResponses,
  };

  const testHelperFail: ZodOpenApiOperationObject = {
    operationId: 'failTestDispatch',
    summary: 'Test mode: a delivery exception on a test dispatch, as a carrier event would report it',
    description:
      "`fail` → exception with the body's `reason` (default `failed_attempt`). Webhooks fire to the issuer's test " +
      'endpoints as for a carrier event; the answer comes once the status record shows the change.',
    security: [{ bearerAuth: [] }],
    requestParams: { path: dispatchId },
    requestBody: { required: false, content: json(testHelperFailBody) },
    responses: testHelperResponses,
  };

  return {
    '/v1/dispatches/{id}/events': { get: listCarrierEvents, post: postEvent },
    '/v1/test_helpers/dispatches/{id}/fail': { post: testHelperFail },
    '/v1/test_helpers/dispatches/{id}/{action}': { post: testHelper },
  };
}
