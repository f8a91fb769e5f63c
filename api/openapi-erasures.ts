// The OpenAPI operations of erasure on request (api/routes/erasures.ts), from the zod schemas the
// routes answer with (domain/erasure-schemas.ts). api/openapi.ts adds them to its document.
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { z } from 'zod';
import { erasureId, erasureRecord, erasureRequested } from '../domain/erasure-schemas.js';
import type { OpenApiHelpers } from './openapi-webhooks.js';

export function erasurePaths(h: OpenApiHelpers, dispatchId: z.ZodObject): ZodOpenApiPathsObject {
  const { json, error, commonErrors, rateLimitHeaders } = h;
  const security = [{ bearerAuth: [] }];

  const eraseDispatch: ZodOpenApiOperationObject = {
    operationId: 'eraseDispatch',
    summary: 'Erase a dispatch everywhere: its record, events, webhooks, tracking links and workflow history',
    description:
      'Answers at once with the erasure, which completes within minutes (documented bound: one day); poll ' +
      '`GET /v1/erasures/{id}`. Asked again, the same erasure is answered. From this request on, while it is still ' +
      'pending, the id is a tombstone: it cannot be registered again (409, with its Idempotency-Key too), reads and ' +
      'carrier events for it answer 404 saying it was erased, and lists leave it out; once completed, only the tombstone ' +
      'stays. Test keys erase test dispatches.',
    security,
    requestParams: { path: dispatchId },
    responses: {
      '202': {
        description: 'the erasure (pending, or as it stands when asked again)',
        headers: rateLimitHeaders,
        content: json(erasureRequested),
      },
      '400': error('`id` is not a UUID v4 (`bad_request`)'),
      '403': error('the dispatch belongs to another issuer, or the key lacks `dispatches:write` (`forbidden`)'),
      '404': error("no dispatch with this id in this key's mode (`not_found`)"),
      ...commonErrors,
    },
  };

  const getErasure: ZodOpenApiOperationObject = {
    operationId: 'getErasure',
    summary: 'The progress of an erasure, and what it removed',
    description: 'Nothing about the dispatch beyond its id. Only the issuer (and mode) that asked for it sees it.',
    security,
    requestParams: { path: z.object({ erasure_id: erasureId }) },
    responses: {
      '200': { description: 'the erasure', headers: rateLimitHeaders, content: json(erasureRecord) },
      '400': error('`erasure_id` is not an erasure id (`bad_request`)'),
      '403': error('the key lacks both `status:read` and `dispatches:write` (`forbidden`)'),
      '404': error("no erasure with this id for this key's issuer and mode (`not_found`)"),
      ...commonErrors,
    },
  };

  return {
    '/v1/erasures/{erasure_id}': { get: getErasure },
    '/v1/dispatches/{id}': { delete: eraseDispatch },
  };
}
