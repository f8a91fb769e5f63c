// The OpenAPI operations of webhook endpoints, webhook events and replays (api/routes/webhook-endpoints.ts,
// webhook-events.ts, replays.ts), from the zod schemas those routes validate with
// (domain/webhook-endpoint-schemas.ts, webhook-event-schemas.ts). api/openapi.ts adds them to its document, handing in its own
// response helpers so that every operation shares one error and header description.
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import { z } from 'zod';
import {
  endpointCreateBody,
  endpointDeleted,
  endpointId,
  endpointList,
  endpointListQuery,
  endpointRecord,
  endpointUpdateBody,
  endpointUpdated,
  endpointWithSecret,
  rotateBody,
  rotatedEndpoint,
  testEventBody,
} from '../domain/webhook-endpoint-schemas.js';
import {
  eventListQuery,
  replayBody,
  replayId,
  replayRecord,
  webhookEventDetail,
  webhookEventId,
  webhookEventList,
  webhookEventRecord,
} from '../domain/webhook-event-schemas.js';

export interface OpenApiHelpers {
  json: (schema: z.ZodType) => Record<string, { schema: z.ZodType }>;
  error: (description: string) => ZodOpenApiResponsesObject['400'];
  commonErrors: ZodOpenApiResponsesObject;
  bodyErrors: () => ZodOpenApiResponsesObject;
  rateLimitHeaders: z.ZodObject;
}

export function webhookPaths(h: OpenApiHelpers): ZodOpenApiPathsObject {
  const { json, error, commonErrors, bodyErrors, rateLimitHeaders } = h;
  const ok = (description: string, schema: z.ZodType) => ({ description, headers: rateLimitHeaders, content: json(schema) });
  const path = z.object({ webhook_endpoint_id: endpointId });
  const security = [{ bearerAuth: [] }];
  const readScope = error('the key lacks `webhooks:read` (`forbidden`)');
  const writeScope = error('the key lacks `webhooks:write` (`forbidden`)');
  const noEndpoint = error("no webhook endpoint with this id for this key's issuer and mode, or it was deleted (`not_found`)");
  const badId = '`webhook_endpoint_id` is not a webhook endpoint id';
  const disabled409 = error('the endpoint is disabled (`conflict`)');

  const createEndpoint: ZodOpenApiOperationObject = {
    operationId: 'createWebhookEndpoint',
    summary: 'Add a webhook endpoint (its signing secret is in this answer only)',
    description:
      "The endpoint belongs to the key's issuer and receives the events of the key's mode. The URL goes through the " +
      'same checks as every delivery (a non-public address is refused). An issuer has at most 20 endpoints by default ' +
      '(`WEBHOOK_MAX_ENDPOINTS_PER_ISSUER`), both modes together.',
    security,
    requestBody: { required: true, content: json(endpointCreateBody) },
    responses: {
      '201': ok('added: the endpoint, its secret and its custom headers in full (never again)', endpointWithSecret),
      ...bodyErrors(),
      '400': error('a field fails validation, or the URL cannot receive webhooks (`url: cannot receive webhooks: …`) (`bad_request`)'),
      '403': writeScope,
      '409': error('the issuer already has its maximum of endpoints, 20 by default (`conflict`)'),
      ...commonErrors,
    },
  };

  const listEndpoints: ZodOpenApiOperationObject = {
    operationId: 'listWebhookEndpoints',
    summary: "The key's issuer's webhook endpoints of its mode, oldest first",
    security,
    requestParams: { query: endpointListQuery },
    responses: {
      '200': ok('one page of endpoints', endpointList),
      '400': error('a parameter is invalid, repeated or unknown; the message names it (`bad_request`)'),
      '403': readScope,
      ...commonErrors,
    },
  };

  const getEndpoint: ZodOpenApiOperationObject = {
    operationId: 'getWebhookEndpoint',
    summary: 'One webhook endpoint (custom header values masked)',
    security,
    requestParams: { path },
    responses: {
      '200': ok('the endpoint', endpointRecord),
      '400': error(`${badId} (\`bad_request\`)`),
      '403': readScope,
      '404': noEndpoint,
      ...commonErrors,
    },
  };

  const updateEndpoint: ZodOpenApiOperationObject = {
    operationId: 'updateWebhookEndpoint',
    summary: 'Change a webhook endpoint: only the fields sent change',
    description:
      '`disabled: true` stops deliveries to it (pending retries are skipped) until `disabled: false`; `headers` replaces ' +
      'every custom header; `rate_limit` is enforced across every worker (docs/webhooks.md "Throttle"). `disabled: false` on ' +
      'a disabled endpoint answers `missed` too: replay it with `POST …/replay` and that `{ since, until }`.',
    security,
    requestParams: { path },
    requestBody: { required: true, content: json(endpointUpdateBody) },
    responses: {
      '200': ok('the endpoint as changed', endpointUpdated),
      ...bodyErrors(),
      '400': error(`${badId}, a field fails validation, or the URL cannot receive webhooks (\`bad_request\`)`),
      '403': writeScope,
      '404': noEndpoint,
      ...commonErrors,
    },
  };

  const deleteEndpoint: ZodOpenApiOperationObject = {
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint: it receives nothing more (its delivery log is kept)',
    security,
    requestParams: { path },
    responses: {
      '200': ok('deleted', endpointDeleted),
      '400': error(`${badId} (\`bad_request\`)`),
      '403': writeScope,
      '404': noEndpoint,
      ...commonErrors,
    },
  };

  const rotateSecret: ZodOpenApiOperationObject = {
    operationId: 'rotateWebhookEndpointSecret',
    summary: 'Replace the signing secret (the new one is in this answer only)',
    description:
      'The new secret signs `X-Service-Signature` at once; during the overlap `webhook-signature` carries a signature ' +
      'with each secret, so a consumer may switch whenever it likes before `previous_secret_expires_at`.',
    security,
    requestParams: { path },
    requestBody: { required: false, content: json(rotateBody) },
    responses: {
      '200': ok('rotated', rotatedEndpoint),
      ...bodyErrors(),
      '400': error(`${badId}, or \`overlap_seconds\` is invalid (\`bad_request\`)`),
      '403': writeScope,
      '404': noEndpoint,
      ...commonErrors,
    },
  };

  const sendTestEvent: ZodOpenApiOperationObject = {
    operationId: 'sendWebhookTestEvent',
    summary: 'Send a test event to this endpoint only',
    description:
      'A sample status record in the real envelope, signed as every delivery, with the nil UUID as its dispatch id (no ' +
      'dispatch can have it). It is delivered, retried and logged like any other event: follow it with GET /v1/events/{webhook_event_id}.',
    security,
    requestParams: { path },
    requestBody: { required: false, content: json(testEventBody) },
    responses: {
      '202': ok('the test event, on its way', webhookEventRecord),
      ...bodyErrors(),
      '400': error(`${badId}, or the endpoint is not subscribed to \`type\` (\`type: this endpoint is not subscribed to …\`) (\`bad_request\`)`), // prettier-ignore
      '403': writeScope,
      '404': noEndpoint,
      '409': disabled409,
      ...commonErrors,
    },
  };

  const replay: ZodOpenApiOperationObject = {
    operationId: 'replayWebhookDeliveries',
    summary: "Send an endpoint's deliveries again: a time range or a list of events",
    description:
      '`{ since, until }`: the deliveries to this endpoint of the events created in [since, until) (`until` must be later ' +
      'than `since`); `{ event_ids }`: of these events. Any number of deliveries, whatever their state; follow the ' +
      'replay with GET /v1/replays/{replay_id}. Nothing matched: a replay completed at once with `total` 0.',
    security,
    requestParams: { path },
    requestBody: { required: true, content: json(replayBody) },
    responses: {
      '202': ok('the replay, started', replayRecord),
      ...bodyErrors(),
      '400': error(`${badId}, a field fails validation, or \`until\` is not later than \`since\` (\`bad_request\`)`),
      '403': writeScope,
      '404': noEndpoint,
      '409': error(
        'the endpoint is disabled, or an event of `event_ids` has had its payload cleared by retention (`conflict`, the message says the payload expired)',
      ),
      ...commonErrors,
    },
  };

  const listEvents: ZodOpenApiOperationObject = {
    operationId: 'listWebhookEvents',
    summary: "The key's issuer's webhook events of its mode, newest first",
    description: 'Pagination is by cursor: pass `next_cursor` as `cursor` with the same filters until it is null.',
    security,
    requestParams: { query: eventListQuery },
    responses: {
      '200': ok('one page of webhook events', webhookEventList),
      '400': error('a parameter is invalid, repeated or unknown; the message names it (`bad_request`)'),
      '403': readScope,
      ...commonErrors,
    },
  };

  const getEvent: ZodOpenApiOperationObject = {
    operationId: 'getWebhookEvent',
    summary: 'One webhook event with its delivery to each endpoint and every attempt',
    security,
    requestParams: { path: z.object({ webhook_event_id: webhookEventId }) },
    responses: {
      '200': ok('the event', webhookEventDetail),
      '400': error('`webhook_event_id` is not a webhook event id (`bad_request`)'),
      '403': readScope,
      '404': error("no webhook event with this id for this key's issuer and mode (`not_found`)"),
      ...commonErrors,
    },
  };

  const getReplay: ZodOpenApiOperationObject = {
    operationId: 'getWebhookReplay',
    summary: "A replay's progress",
    security,
    requestParams: { path: z.object({ replay_id: replayId }) },
    responses: {
      '200': ok('the replay', replayRecord),
      '400': error('`replay_id` is not a replay id (`bad_request`)'),
      '403': readScope,
      '404': error("no replay with this id for this key's issuer and mode (`not_found`)"),
      ...commonErrors,
    },
  };

  return {
    '/v1/webhook_endpoints': { get: listEndpoints, post: createEndpoint },
    '/v1/webhook_endpoints/{webhook_endpoint_id}': { get: getEndpoint, patch: updateEndpoint, delete: deleteEndpoint },
    '/v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret': { post: rotateSecret },
    '/v1/webhook_endpoints/{webhook_endpoint_id}/test': { post: sendTestEvent },
    '/v1/webhook_endpoints/{webhook_endpoint_id}/replay': { post: replay },
    '/v1/events': { get: listEvents },
    '/v1/events/{webhook_event_id}': { get: getEvent },
    '/v1/replays/{replay_id}': { get: getReplay },
  };
}
