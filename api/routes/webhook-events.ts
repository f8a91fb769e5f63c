// Webhook events as an API (docs/webhooks.md "Webhook events"): GET /v1/events, the
// issuer's events of the key's mode, newest first, a page at a time, filtered by type, dispatch and
// start time; GET /v1/events/{id}, one event with its delivery to each endpoint and every attempt
// (db/webhook-event-reads.ts). Another issuer's, the other mode's or an unknown event → 404. The
// query and the path id are checked (400) before the key's `webhooks:read` scope (403).
import type Router from '@koa/router';
import type { Pool } from '../../db/pool.js';
import { decodeEventCursor, encodeEventCursor, findWebhookEvent, pageWebhookEvents } from '../../db/webhook-event-reads.js';
import { LIST_LIMIT_DEFAULT } from '../../domain/field-schemas.js';
import { eventListQuery, webhookEventId } from '../../domain/webhook-event-schemas.js';
import { badRequest, notFound, parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { queryOnce, toEventBody } from '../route-params.js';

export function webhookEventRoutes(router: Router, pool: Pool): void {
  router.get('/v1/events', async (ctx) => {
    const query = parseOrBadRequest(eventListQuery, { ...queryOnce(ctx.query) });
    const after = query.cursor === undefined ? undefined : decodeEventCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');
    const key = checkScope(ctx.state.apiKey, 'webhooks:read');
    const page = await pageWebhookEvents(pool, {
      issuerId: key.issuerId,
      mode: key.mode,
      type: query.type,
      dispatchId: query.dispatch_id?.toLowerCase(),
      since: query.since === undefined ? undefined : new Date(query.since),
      limit: query.limit ?? LIST_LIMIT_DEFAULT,
      after,
    });
    ctx.body = { data: page.items.map(toEventBody), next_cursor: page.next ? encodeEventCursor(page.next) : null };
  });

  router.get('/v1/events/:webhook_event_id', async (ctx) => {
    const id = parseOrBadRequest(webhookEventId, ctx.params.webhook_event_id, 'webhook_event_id');
    const key = checkScope(ctx.state.apiKey, 'webhooks:read');
    const event = await findWebhookEvent(pool, key.issuerId, key.mode, id);
    if (!event) throw notFound(`no webhook event ${id} for this key's issuer and mode`);
    ctx.body = {
      ...toEventBody(event),
      deliveries: event.deliveries.map((delivery) => ({
        endpoint_id: delivery.endpointId,
        state: delivery.state,
        attempts: delivery.attempts.map((attempt) => ({
          number: attempt.number,
          attempted_at: attempt.attemptedAt.toISOString(),
          status_code: attempt.statusCode,
          outcome: attempt.outcome,
          duration_ms: attempt.durationMs,
        })),
      })),
    };
  });
}
