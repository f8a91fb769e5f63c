// The delivery log: every attempt to one of the issuer's endpoints, newest first, filtered by event
// type and outcome and paged by keyset; one event's detail (the exact body sent, each attempt with
// the headers it carried, its X-Service-Signature among them); replay of one event to this endpoint
// or of the endpoint's events of a time range (ingest/webhook-replays.ts, as `deliveries replay`), with the
// progress of the endpoint's recent replays (matched, sent, delivered, failed). The nav's
// "Delivery log" lists the endpoints to choose from.
import type Router from '@koa/router';
import { PayloadExpired, replayDeliveries } from '../../ingest/webhook-replays.js';
import { findDelivery, listAttempts, OUTCOMES } from '../../db/delivery-log.js';
import { listEndpointsWithHealth } from '../../db/delivery-summaries.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/vocabulary.js';
import { listReplays } from '../../db/webhook-replays.js';
import { findEndpoint } from '../../db/webhook-endpoints.js';
import type { DashboardDeps } from '../deps.js';
import { renderPage } from '../render.js';
import { ownedOr404, tenantRoute } from '../tenancy.js';
import { FIELD_ERRORS, formError } from '../form-errors.js';
import { logQuery, rangeForm, utcInputValue } from '../webhook-forms.js';

export const LOG_PAGE_SIZE = 50;

const REPLAY_REFUSED = 'Nothing to replay: no delivery matches, or the endpoint is disabled (enable it first).';

export function deliveryLogRoutes(router: Router, { pool, config, temporal }: DashboardDeps): void {
  const redelivery = { pool, temporal, taskQueue: config.TEMPORAL_TASK_QUEUE };
  const logPath = (id: string) => `/dashboard/webhooks/${encodeURIComponent(id)}/deliveries`;

  router.get(
    '/deliveries',
    tenantRoute(async (ctx, tenant) => {
      const endpoints = await listEndpointsWithHealth(pool, tenant.issuerId);
      renderPage(ctx, 'delivery-endpoints', { title: 'Delivery log', endpoints });
    }),
  );

  router.get(
    '/webhooks/:id/deliveries',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      const query = logQuery.parse(ctx.query);
      const page = await listAttempts(pool, endpoint.id, {
        eventType: query.event,
        outcome: query.outcome,
        before: query.before,
        limit: LOG_PAGE_SIZE,
      });
      const filters = new URLSearchParams({ ...(query.event && { event: query.event }), ...(query.outcome && { outcome: query.outcome }) });
      const nextUrl = page.next ? `${logPath(endpoint.id)}?${new URLSearchParams({ ...Object.fromEntries(filters), before: String(page.next) })}` : undefined; // prettier-ignore
      const replayed = typeof ctx.query.replayed === 'string' ? Number(ctx.query.replayed) : undefined;
      const replays = await listReplays(pool, endpoint.id);
      const now = new Date();
      renderPage(ctx, 'deliveries', {
        title: 'Delivery log',
        endpoint,
        attempts: page.attempts,
        eventTypes: WEBHOOK_EVENT_TYPES,
        outcomes: OUTCOMES,
        query,
        nextUrl,
        firstUrl: query.before ? `${logPath(endpoint.id)}?${filters}` : undefined,
        replayed: Number.isInteger(replayed) ? replayed : undefined,
        replays,
        error: typeof ctx.query.error === 'string' && ctx.query.error === 'nothing' ? REPLAY_REFUSED : undefined,
        range: { since: utcInputValue(new Date(now.getTime() - 86_400_000)), until: utcInputValue(new Date(now.getTime() + 60_000)) },
      });
    }),
  );

  router.get(
    '/webhooks/:id/deliveries/:eventId',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      const delivery = ownedOr404(await findDelivery(pool, endpoint.id, ctx.params.eventId));
      const notice =
        ctx.query.sent === 'test'
          ? 'Test event sent. Its attempt is below.'
          : ctx.query.replayed === '1'
            ? 'Replay started: the event is sent again with the same id and body.'
            : undefined;
      renderPage(ctx, 'delivery', {
        title: delivery.testEvent ? 'Test event' : 'Webhook event',
        endpoint,
        delivery,
        notice,
        error: ctx.query.error === 'nothing' ? REPLAY_REFUSED : undefined,
      });
    }),
  );

  router.post(
    '/webhooks/:id/deliveries/:eventId/replay',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      const delivery = ownedOr404(await findDelivery(pool, endpoint.id, ctx.params.eventId));
      const replay = await replayDeliveries(redelivery, { eventId: delivery.eventId, endpointId: endpoint.id }).catch((error: unknown) => {
        if (error instanceof PayloadExpired) return error;
        throw error;
      });
      if (replay instanceof PayloadExpired) return renderPage(ctx, 'error', { title: 'Replay not started', message: replay.message }, 409);
      ctx.status = 303;
      ctx.redirect(`${logPath(endpoint.id)}/${encodeURIComponent(delivery.eventId)}?${replay ? 'replayed=1' : 'error=nothing'}`);
    }),
  );

  router.post(
    '/webhooks/:id/replay',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      const form = rangeForm.safeParse(ctx.request.body ?? {}, FIELD_ERRORS);
      if (!form.success) {
        const error = formError(form.error);
        return renderPage(ctx, 'error', { title: 'Replay not started', message: error }, 400);
      }
      const replay = await replayDeliveries(redelivery, { endpointId: endpoint.id, ...form.data });
      ctx.status = 303;
      ctx.redirect(`${logPath(endpoint.id)}?${replay ? `replayed=${replay.total}` : 'error=nothing'}`);
    }),
  );
}
