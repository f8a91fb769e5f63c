// The OpenAPI operations of tracking feeds (api/routes/tracking-feeds.ts) and of their inbound
// endpoint (api/routes/inbound.ts), from the zod schemas those routes validate with
// (domain/tracking-feed-schemas.ts). api/openapi.ts adds them to its document. The inbound body is the
// provider's own (docs/tracking-feeds.md, one section per provider): described, not schema'd here.
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { z } from 'zod';
import {
  feedCreateBody,
  feedId,
  feedListQuery,
  feedUpdateBody,
  ignoredList,
  inboundReceipt,
  trackingFeed,
  trackingFeedList,
  unmatchedList,
} from '../domain/tracking-feed-schemas.js';
import { errorBody } from '../domain/dispatch-schemas.js';
import type { OpenApiHelpers } from './openapi-webhooks.js';
import { INBOUND_BODY_LIMIT } from './routes/inbound.js';

export function trackingFeedPaths(h: OpenApiHelpers): ZodOpenApiPathsObject {
  const { json, error, commonErrors, bodyErrors, rateLimitHeaders } = h;
  const ok = (description: string, schema: z.ZodType) => ({ description, headers: rateLimitHeaders, content: json(schema) });
  const security = [{ bearerAuth: [] }];
  const path = z.object({ feed_id: feedId });
  const scope = error('the key lacks `events:write` (`forbidden`)');
  const noFeed = error("no such feed for this key's issuer and mode, or it was revoked (`not_found`)");

  const createFeed: ZodOpenApiOperationObject = {
    operationId: 'createTrackingFeed',
    summary: "A tracking feed: the URL to paste into the provider's webhook settings",
    description:
      '`secret` is the webhook secret the provider shows (EasyPost, AfterShip, Ship24): required for those, never ' +
      'returned. For `shippo` the service generates a token and this answer alone shows it, in `url` (`?token=…`). A ' +
      'test key makes a test feed, whose checkpoints match only test dispatches.',
    security,
    requestBody: { required: true, content: json(feedCreateBody) },
    responses: { '201': ok('the feed', trackingFeed), ...bodyErrors(), '403': scope, ...commonErrors },
  };
  const listFeeds: ZodOpenApiOperationObject = {
    operationId: 'listTrackingFeeds',
    summary: "The key's issuer's feeds of its mode, oldest first, with the last 24 hours' counts",
    security,
    requestParams: { query: feedListQuery },
    responses: {
      '200': ok('one page of feeds', trackingFeedList),
      '400': error('a parameter is invalid (`bad_request`)'),
      '403': scope,
      ...commonErrors,
    },
  };
  const getFeed: ZodOpenApiOperationObject = {
    operationId: 'getTrackingFeed',
    summary: 'One feed, with its counts',
    security,
    requestParams: { path },
    responses: { '200': ok('the feed', trackingFeed), '400': error('`feed_id` is not a feed id (`bad_request`)'), '403': scope, '404': noFeed, ...commonErrors }, // prettier-ignore
  };
  const updateFeed: ZodOpenApiOperationObject = {
    operationId: 'updateTrackingFeed',
    summary: 'Set the secret (after rotating it at the provider) or the description',
    description: 'A `shippo` feed has no secret to set (400): create a new feed for a new token.',
    security,
    requestParams: { path },
    requestBody: { required: true, content: json(feedUpdateBody) },
    responses: { '200': ok('the feed', trackingFeed), ...bodyErrors(), '403': scope, '404': noFeed, ...commonErrors },
  };
  const revokeFeed: ZodOpenApiOperationObject = {
    operationId: 'revokeTrackingFeed',
    summary: 'Revoke a feed: its URL answers 404 from then on',
    security,
    requestParams: { path },
    responses: {
      '204': { description: 'revoked', headers: rateLimitHeaders },
      '400': error('`feed_id` is not a feed id (`bad_request`)'),
      '403': scope,
      '404': noFeed,
      ...commonErrors,
    },
  };
  const listUnmatched: ZodOpenApiOperationObject = {
    operationId: 'listUnmatchedCheckpoints',
    summary: 'Checkpoints of the last 30 days that no dispatch matched yet, newest first',
    description: 'Each is applied, and leaves this list, the moment a matching dispatch is registered.',
    security,
    requestParams: { path, query: feedListQuery },
    responses: {
      '200': ok('one page of checkpoints', unmatchedList),
      '400': error('`feed_id` is not a feed id, or a parameter is invalid (`bad_request`)'),
      '403': scope,
      '404': noFeed,
      ...commonErrors,
    },
  };
  const listIgnored: ZodOpenApiOperationObject = {
    operationId: 'listIgnoredCheckpoints',
    summary: 'Checkpoints of the last 30 days that changed nothing, with why, newest first',
    description:
      "Counted as `ignored`: the provider's status says nothing about where the card is, it has no time, its time lies outside the " +
      "dispatch's time bounds, or the dispatch is closed. Never applied. Nothing is kept of an erased dispatch's checkpoints.",
    security,
    requestParams: { path, query: feedListQuery },
    responses: {
      '200': ok('one page of checkpoints', ignoredList),
      '400': error('`feed_id` is not a feed id, or a parameter is invalid (`bad_request`)'),
      '403': scope,
      '404': noFeed,
      ...commonErrors,
    },
  };

  // The inbound endpoint's headers, as api/routes/inbound.ts sets them: the X-RateLimit-* of the window
  // the request counted in, on every answer as on every /v1 one: the feed's signed requests (200, 400),
  // its unsigned ones (401, 413 and HEAD: never authenticated), or the client IP's when the URL names no
  // live feed (404, and the 405 of other methods), as for a request without a valid key.
  const requestIdHeader = z.object({ 'X-Request-Id': z.string().meta({ description: 'id of this request' }) });
  const WINDOW_HEADERS = {
    'X-RateLimit-Limit': {
      description:
        "requests allowed per one-minute window: FEED_RATE_PER_MINUTE for the feed's signed requests, or its unsigned ones (401, 413, HEAD); RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE for the client IP (404)",
      example: '6000',
    },
    'X-RateLimit-Remaining': { description: 'requests left in the current window', example: '5998' },
    'X-RateLimit-Reset': { description: 'end of the current window, UTC epoch seconds', example: '1795000020' },
  };
  /** The window's headers, each optional when `optional` (a 500 or 503 carries them only if the request had reached its window). */
  const windowHeaders = (optional: boolean) =>
    Object.fromEntries(
      Object.entries(WINDOW_HEADERS).map(([name, meta]) => [name, (optional ? z.string().optional() : z.string()).meta(meta)]),
    );
  const feedWindowHeaders = requestIdHeader.extend(windowHeaders(false));
  const limitedHeaders = feedWindowHeaders.extend({
    'Retry-After': z.string().meta({ description: 'whole seconds until the window resets', example: '17' }),
  });
  const failureHeaders = requestIdHeader.extend(windowHeaders(true));
  const inboundError = (description: string, headers: z.ZodObject = requestIdHeader) => ({
    description,
    headers,
    content: json(errorBody),
  });
  const inboundPath = z.object({ feed_id: z.string().meta({ description: 'the feed id of the URL', example: 'fd_4kR9wQ2mZp7TxA1c' }) });
  const receive: ZodOpenApiOperationObject = {
    operationId: 'receiveTrackingFeedWebhook',
    summary: "The provider's webhook, as it sends it (no API key: the provider's own signature)",
    description:
      "Authenticated on the raw body bytes before any parsing, by the feed provider's scheme: EasyPost `X-Hmac-Signature`, " +
      'AfterShip `aftership-hmac-sha256`, Ship24 `Authorization: Bearer <secret>`, Shippo the `token` query parameter. ' +
      `At most ${INBOUND_BODY_LIMIT} bytes; per feed at most FEED_RATE_PER_MINUTE signed requests a minute, and as many unsigned ones ` +
      'in a window of their own (they never use up the signed). 200 only once every ' +
      'checkpoint of the body is durable (docs/tracking-feeds.md). Any other method but HEAD on this URL → 405 ' +
      '`method_not_allowed` with `Allow: HEAD, POST`.',
    security: [],
    requestParams: { path: inboundPath },
    requestBody: { content: json(z.object({}).loose().meta({ id: 'ProviderWebhookBody', description: "the provider's own body" })) },
    responses: {
      '200': { description: 'what each checkpoint counted as', headers: feedWindowHeaders, content: json(inboundReceipt) },
      '400': inboundError("not the provider's shape: the message names the field (`bad_request`)", feedWindowHeaders),
      '401': inboundError(
        "wrong or missing signature or token; nothing stored (`unauthorized`); the X-RateLimit-* are the unsigned requests' window",
        feedWindowHeaders,
      ),
      '404': inboundError("unknown or revoked feed (`not_found`); the X-RateLimit-* are the client IP's window", feedWindowHeaders),
      '413': inboundError(
        `body larger than ${INBOUND_BODY_LIMIT} bytes (\`payload_too_large\`); the X-RateLimit-* are the unsigned requests' window`,
        feedWindowHeaders,
      ),
      '429': inboundError(
        "more than FEED_RATE_PER_MINUTE signed (or unsigned) requests this minute for this feed, or (no live feed) the client IP's limit; `Retry-After` says when (`rate_limit_exceeded`)",
        limitedHeaders,
      ),
      '500': inboundError('unexpected server error (`internal_error`): the provider retries', failureHeaders),
      '503': inboundError(
        'Postgres or the workflow service is unreachable (`service_unavailable`, with `Retry-After`): the provider retries',
        failureHeaders.extend({ 'Retry-After': z.string().meta({ description: 'whole seconds to wait before retrying', example: '5' }) }),
      ),
    },
  };
  const probe: ZodOpenApiOperationObject = {
    operationId: 'probeTrackingFeedUrl',
    summary: 'The URL exists (Ship24 checks it with HEAD)',
    security: [],
    requestParams: { path: inboundPath },
    responses: {
      '200': { description: "a live feed; the X-RateLimit-* are its unsigned requests' window", headers: feedWindowHeaders },
      '404': { description: "unknown or revoked feed; the X-RateLimit-* are the client IP's window", headers: feedWindowHeaders },
      '429': { description: 'the window is used up (`Retry-After` says when)', headers: limitedHeaders },
    },
  };

  return {
    '/v1/tracking_feeds': { get: listFeeds, post: createFeed },
    '/v1/tracking_feeds/{feed_id}': { get: getFeed, patch: updateFeed, delete: revokeFeed },
    '/v1/tracking_feeds/{feed_id}/unmatched': { get: listUnmatched },
    '/v1/tracking_feeds/{feed_id}/ignored': { get: listIgnored },
    '/v1/inbound/{feed_id}': {
      description:
        "Any other method but POST and HEAD → 405 `method_not_allowed` with `Allow: HEAD, POST` (and the client IP's X-RateLimit-*).",
      post: receive,
      head: probe,
    },
  };
}
