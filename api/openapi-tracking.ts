// The OpenAPI operations of tracking links and the tracking page's branding (api/routes/tracking-links.ts),
// from the zod schemas those routes validate with (domain/tracking-links.ts). api/openapi.ts adds
// them to its document with its own response helpers. The page itself (GET/POST /t/{token}) is HTML
// for cardholders, not part of the integrator API: docs/tracking-page.md "Tracking links and the tracking page" states it.
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { z } from 'zod';
import { uuidV4 } from '../domain/field-schemas.js';
import {
  DEFAULT_LINK_LIFETIME_DAYS,
  MAX_LINK_LIFETIME_DAYS,
  MIN_CONTRAST_WITH_WHITE,
  trackingLinkCreateBody,
  trackingLinkCreated,
  trackingLinkId,
  trackingLinkList,
  trackingLinkListQuery,
  trackingPageBranding,
  trackingPageBrandingPatch,
} from '../domain/tracking-links.js';
import type { OpenApiHelpers } from './openapi-webhooks.js';

export function trackingPaths(h: OpenApiHelpers): ZodOpenApiPathsObject {
  const { json, error, commonErrors, bodyErrors, rateLimitHeaders } = h;
  const ok = (description: string, schema: z.ZodType) => ({ description, headers: rateLimitHeaders, content: json(schema) });
  const security = [{ bearerAuth: [] }];
  const dispatchId = z.object({
    id: uuidV4.meta({ description: 'dispatch id, a UUID v4', example: '7d3c1a52-1f3e-4c55-9a57-0f6a9c1d2b11' }),
  });
  const scope = error('the dispatch belongs to another issuer, or the key lacks `dispatches:write` (`forbidden`)');
  const noDispatch = error("no dispatch with this id in this key's mode (`not_found`)");

  const createLink: ZodOpenApiOperationObject = {
    operationId: 'createTrackingLink',
    summary: "A link to the cardholder's tracking page for this dispatch (its token is in this answer only)",
    description:
      'The `url` is `{PUBLIC_BASE_URL}/t/{token}`: the token is a credential (256 random bits), stored only as a hash and ' +
      `never shown again. \`expires_at\` defaults to ${DEFAULT_LINK_LIFETIME_DAYS} days from now and may be at most ` +
      `${MAX_LINK_LIFETIME_DAYS} days ahead; \`locale\` defaults to the dispatch's; with \`require_postal_code\` the page ` +
      'first asks for the destination postal code.',
    security,
    requestParams: { path: dispatchId },
    requestBody: { required: false, content: json(trackingLinkCreateBody) },
    responses: {
      '201': ok('the link, with its url (never again)', trackingLinkCreated),
      ...bodyErrors(),
      '400': error('`id` is not a UUID v4, or a field fails validation (`expires_at` out of bounds); the message names it (`bad_request`)'),
      '403': scope,
      '404': noDispatch,
      ...commonErrors,
    },
  };

  const listLinks: ZodOpenApiOperationObject = {
    operationId: 'listTrackingLinks',
    summary: "A dispatch's tracking links, newest first, without their tokens",
    security,
    requestParams: { path: dispatchId, query: trackingLinkListQuery },
    responses: {
      '200': ok('one page of links', trackingLinkList),
      '400': error('`id` is not a UUID v4, or a parameter is invalid (`bad_request`)'),
      '403': scope,
      '404': noDispatch,
      ...commonErrors,
    },
  };

  const revokeLink: ZodOpenApiOperationObject = {
    operationId: 'revokeTrackingLink',
    summary: 'Revoke a tracking link at once (its page answers 410 from the next request, on every API process)',
    security,
    requestParams: { path: dispatchId.extend({ link_id: trackingLinkId }) },
    responses: {
      '204': { description: 'revoked (also when it already was)', headers: rateLimitHeaders },
      '400': error('`id` is not a UUID v4 or `link_id` not a tracking link id (`bad_request`)'),
      '403': scope,
      '404': error('no such dispatch, or no such link for it (`not_found`)'),
      ...commonErrors,
    },
  };

  const getBranding: ZodOpenApiOperationObject = {
    operationId: 'getTrackingPageBranding',
    summary: "The issuer's branding of the tracking page",
    description: 'Every field null until set: the page then shows the issuer name in neutral colours.',
    security,
    responses: {
      '200': ok('the branding', trackingPageBranding),
      '403': error('the key lacks `dispatches:write` (`forbidden`)'),
      ...commonErrors,
    },
  };

  const patchBranding: ZodOpenApiOperationObject = {
    operationId: 'updateTrackingPageBranding',
    summary: "Change the issuer's branding of the tracking page (the fields given; null clears one)",
    description:
      `URLs must be https; \`support_phone\` E.164; \`accent_color\` is the background of white text, so it must reach ` +
      `${MIN_CONTRAST_WITH_WHITE}:1 against white (WCAG 2.2 AA).`,
    security,
    requestBody: { required: true, content: json(trackingPageBrandingPatch) },
    responses: {
      '200': ok('the whole branding after the change', trackingPageBranding),
      ...bodyErrors(),
      '403': error('the key lacks `dispatches:write` (`forbidden`)'),
      ...commonErrors,
    },
  };

  return {
    '/v1/dispatches/{id}/tracking_links': { get: listLinks, post: createLink },
    '/v1/dispatches/{id}/tracking_links/{link_id}': { delete: revokeLink },
    '/v1/tracking_page': { get: getBranding, patch: patchBranding },
  };
}
