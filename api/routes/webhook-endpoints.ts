// Webhook endpoints as an API (docs/webhooks.md "Webhook endpoints"): create, list,
// read, update, delete, rotate the secret and send a test event, for the key's issuer and mode only
// (another issuer's, the other mode's, a removed or an unknown endpoint → 404: endpoints are not
// dispatches, whose cross-issuer answer is 403). The same rules as the CLI and the dashboard: the SSRF
// guard on the URL (platform/ssrf-guard.ts), the per-issuer endpoint cap (WEBHOOK_MAX_ENDPOINTS_PER_ISSUER),
// rotation with an overlap (rotateWebhookSecret), the synthetic test event (createTestEvent, the nil
// UUID as dispatch id) delivered by a redelivery workflow. The secret is answered only by create and
// rotate_secret; custom header values only by create, masked ever after, and never logged.
// Check order as docs/http-contract.md "Common rules": the path id and the body (400) before the
// key's scope (403), then the endpoint (404); the URL's SSRF check (400) comes after the scope, so a
// key without it cannot make the service resolve host names.
import type Router from '@koa/router';
import type { Client } from '@temporalio/client';
import type { Pool } from '../../db/pool.js';
import {
  decodeEndpointCursor,
  encodeEndpointCursor,
  findEndpointSettings,
  missedDeliveries,
  missedFrom,
  pageEndpointSettings,
  updateEndpointSettings,
  type EndpointSettings,
} from '../../db/webhook-endpoint-settings.js';
import {
  createTestEvent,
  createWebhookEndpoint,
  removeUnstartedTestEvent,
  removeWebhookEndpoint,
  rotateWebhookSecret,
} from '../../db/webhook-endpoints.js';
import { findWebhookEvent } from '../../db/webhook-event-reads.js';
import { LIST_LIMIT_DEFAULT } from '../../domain/field-schemas.js';
import {
  endpointCreateBody,
  endpointListQuery,
  endpointUpdateBody,
  maskHeaders,
  rotateBody,
  testEventBody,
} from '../../domain/webhook-endpoint-schemas.js';
import type { Config } from '../../platform/config.js';
import { checkWebhookUrl, WebhookUrlRefused } from '../../platform/ssrf-guard.js';
import { startRedelivery } from '../../temporal/client.js';
import { badRequest, conflict, notFound, parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { jsonBody, optionalJsonBody } from '../middleware/json-body.js';
import { endpointIdParam, endpointNotFound, queryOnce, toEventBody } from '../route-params.js';

const DEFAULT_OVERLAP_SECONDS = 86_400;

export interface EndpointRouteDeps {
  pool: Pool;
  temporal: Client;
  config: Pick<Config, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS' | 'WEBHOOK_MAX_ENDPOINTS_PER_ISSUER' | 'TEMPORAL_TASK_QUEUE'>;
}

/** The API's shape of an endpoint; header values masked unless `revealHeaders` (the create answer only). */
export function toEndpointBody(endpoint: EndpointSettings, revealHeaders = false) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    disabled: endpoint.pausedAt !== null,
    disabled_reason: endpoint.pausedAt !== null ? (endpoint.pausedReason ?? 'manual') : null,
    disabled_at: endpoint.pausedAt?.toISOString() ?? null,
    headers: revealHeaders ? endpoint.headers : maskHeaders(endpoint.headers),
    rate_limit: endpoint.rateLimit,
    created_at: endpoint.createdAt.toISOString(),
  };
}

export function webhookEndpointRoutes(router: Router, deps: EndpointRouteDeps): void {
  const { pool, config } = deps;

  const checkUrl = async (url: string) => {
    try {
      await checkWebhookUrl(url, { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
    } catch (error) {
      if (error instanceof WebhookUrlRefused) throw badRequest(`url: cannot receive webhooks: ${error.reason}`);
      throw error;
    }
  };

  router.post('/v1/webhook_endpoints', jsonBody(), async (ctx) => {
    const body = parseOrBadRequest(endpointCreateBody, ctx.request.body);
    const key = checkScope(ctx.state.apiKey, 'webhooks:write');
    await checkUrl(body.url);
    const settings = { description: body.description ?? null, headers: body.headers ?? {}, rateLimit: body.rate_limit ?? null };
    const max = config.WEBHOOK_MAX_ENDPOINTS_PER_ISSUER;
    const created = await createWebhookEndpoint(pool, { issuerId: key.issuerId, url: body.url, events: body.events, mode: key.mode, settings }, max); // prettier-ignore
    if (!created.ok) {
      if (created.reason === 'limit_reached')
        throw conflict(`limit reached: this issuer already has ${max} webhook endpoints (both modes together), the maximum; delete one first`); // prettier-ignore
      throw notFound('the issuer of this key no longer exists');
    }
    const { endpoint } = created;
    ctx.status = 201;
    ctx.set('Location', `/v1/webhook_endpoints/${endpoint.id}`);
    ctx.body = {
      ...toEndpointBody({ ...endpoint, ...settings }, true),
      secret: created.secret,
    };
  });

  router.get('/v1/webhook_endpoints', async (ctx) => {
    const query = parseOrBadRequest(endpointListQuery, { ...queryOnce(ctx.query) });
    const after = query.cursor === undefined ? undefined : decodeEndpointCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');
    const key = checkScope(ctx.state.apiKey, 'webhooks:read');
    const page = await pageEndpointSettings(pool, key.issuerId, key.mode, { limit: query.limit ?? LIST_LIMIT_DEFAULT, after });
    ctx.body = {
      data: page.items.map((endpoint) => toEndpointBody(endpoint)),
      next_cursor: page.next ? encodeEndpointCursor(page.next) : null,
    };
  });

  router.get('/v1/webhook_endpoints/:webhook_endpoint_id', async (ctx) => {
    const id = endpointIdParam(ctx.params.webhook_endpoint_id);
    const key = checkScope(ctx.state.apiKey, 'webhooks:read');
    const endpoint = await findEndpointSettings(pool, key.issuerId, key.mode, id);
    if (!endpoint) throw endpointNotFound(id);
    ctx.body = toEndpointBody(endpoint);
  });

  router.patch('/v1/webhook_endpoints/:webhook_endpoint_id', jsonBody(), async (ctx) => {
    const id = endpointIdParam(ctx.params.webhook_endpoint_id);
    const body = parseOrBadRequest(endpointUpdateBody, ctx.request.body);
    const key = checkScope(ctx.state.apiKey, 'webhooks:write');
    const before = await findEndpointSettings(pool, key.issuerId, key.mode, id);
    if (!before) throw endpointNotFound(id);
    if (body.url !== undefined) await checkUrl(body.url);
    const updated = await updateEndpointSettings(pool, key.issuerId, key.mode, id, {
      url: body.url,
      events: body.events,
      description: body.description,
      paused: body.disabled,
      headers: body.headers,
      rateLimit: body.rate_limit,
    });
    if (!updated) throw endpointNotFound(id);
    // Enabled again: what it missed, from its first failure (auto-disabled) or its pause, to now,
    // which POST …/replay with { since, until } sends (docs/webhooks.md "Auto-disable").
    const from = missedFrom(before);
    if (from && body.disabled === false) {
      const until = new Date();
      const { since, count } = await missedDeliveries(pool, id, from, until);
      ctx.body = { ...toEndpointBody(updated), missed: { since: since.toISOString(), until: until.toISOString(), count } };
      return;
    }
    ctx.body = toEndpointBody(updated);
  });

  router.delete('/v1/webhook_endpoints/:webhook_endpoint_id', async (ctx) => {
    const id = endpointIdParam(ctx.params.webhook_endpoint_id);
    const key = checkScope(ctx.state.apiKey, 'webhooks:write');
    // Found among the issuer's endpoints of this mode: the ownership check (an endpoint never changes issuer).
    if (!(await findEndpointSettings(pool, key.issuerId, key.mode, id))) throw endpointNotFound(id);
    await removeWebhookEndpoint(pool, id);
    ctx.body = { id, deleted: true };
  });

  router.post('/v1/webhook_endpoints/:webhook_endpoint_id/rotate_secret', optionalJsonBody(), async (ctx) => {
    const id = endpointIdParam(ctx.params.webhook_endpoint_id);
    const body = parseOrBadRequest(rotateBody, ctx.request.body);
    const key = checkScope(ctx.state.apiKey, 'webhooks:write');
    if (!(await findEndpointSettings(pool, key.issuerId, key.mode, id))) throw endpointNotFound(id);
    // docs/webhooks.md "Signing": the new secret signs X-Service-Signature at once; webhook-signature carries both
    // signatures for the overlap, as the CLI's and the dashboard's rotation does.
    const overlapMs = (body.overlap_seconds ?? DEFAULT_OVERLAP_SECONDS) * 1000;
    const rotated = await rotateWebhookSecret(pool, id, { overlapMs, switchAt: new Date() });
    const endpoint = rotated && (await findEndpointSettings(pool, key.issuerId, key.mode, id));
    if (!rotated || !endpoint) throw endpointNotFound(id);
    ctx.body = {
      ...toEndpointBody(endpoint),
      secret: rotated.secret,
      previous_secret_expires_at: rotated.previousSecretExpiresAt.toISOString(),
    };
  });

  router.post('/v1/webhook_endpoints/:webhook_endpoint_id/test', optionalJsonBody(), async (ctx) => {
    const id = endpointIdParam(ctx.params.webhook_endpoint_id);
    const body = parseOrBadRequest(testEventBody, ctx.request.body);
    const key = checkScope(ctx.state.apiKey, 'webhooks:write');
    const endpoint = await findEndpointSettings(pool, key.issuerId, key.mode, id);
    if (!endpoint) throw endpointNotFound(id);
    const type = body.type ?? endpoint.events[0];
    if (!endpoint.events.includes(type)) throw badRequest(`type: this endpoint is not subscribed to ${type}`);
    if (endpoint.pausedAt) throw conflict('this endpoint is disabled; enable it (PATCH disabled: false) to send a test event');
    const delivery = await createTestEvent(pool, key.issuerId, id, type);
    if (!delivery) throw conflict('this endpoint was disabled or deleted meanwhile');
    try {
      await startRedelivery(deps.temporal, config.TEMPORAL_TASK_QUEUE, [delivery]);
    } catch (error) {
      // Not started (Temporal unavailable: 503): the event leaves with the error, so a retry sends one, not two.
      if (await removeUnstartedTestEvent(pool, delivery.eventId)) throw error;
    }
    const event = await findWebhookEvent(pool, key.issuerId, key.mode, delivery.eventId);
    ctx.status = 202;
    ctx.body = toEventBody(event!);
  });
}
