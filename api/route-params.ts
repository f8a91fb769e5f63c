// What several routes share: query and path parameters and the shapes they answer with. A route
// never imports another route (docs/architecture.md "Layers"); what two of them need lives here.
import type { WebhookEventItem } from '../db/webhook-event-reads.js';
import { endpointId } from '../domain/webhook-endpoint-schemas.js';
import { badRequest, notFound, parseOrBadRequest } from './errors.js';

/** Refuses repeated query parameters (400), as every list does. */
export function queryOnce(query: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const repeated = Object.entries(query).find(([, value]) => Array.isArray(value));
  if (repeated) throw badRequest(`${repeated[0]}: must be given once`);
  return query as Record<string, string | undefined>;
}

/** A webhook event as the API shows it (`GET /v1/events`, a test event's answer). */
export function toEventBody(event: WebhookEventItem) {
  return { id: event.id, type: event.type, dispatch_id: event.dispatchId, created_at: event.createdAt.toISOString(), data: event.data };
}

/**
 * The `{webhook_endpoint_id}` path parameter (400 unless it is an endpoint id). Named apart from every
 * other route's `{id}`, so that a client or fuzzer linking operations by parameter name never hands
 * a dispatch id to an endpoint route.
 */
export function endpointIdParam(id: string): string {
  return parseOrBadRequest(endpointId, id, 'webhook_endpoint_id');
}

export const endpointNotFound = (id: string) => notFound(`no webhook endpoint ${id} for this key's issuer and mode`);
