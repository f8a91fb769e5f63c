// The actions on one of the issuer's webhook endpoints: edit its events, disable (a pause) and
// enable, reveal its signing secret (a POST, so the secret is never in a page a link or the
// browser history can bring back), rotate the secret with an overlap (db/webhook-endpoints.ts
// rotateWebhookSecret, as the CLI), and send a test event: a real signed delivery of a sample
// record through the redelivery workflow and the delivery activity, so it lands in the log like
// any other; the answer waits for its first attempt and opens that event in the log.
import type Router from '@koa/router';
import { missedDeliveries, missedFrom } from '../../db/webhook-endpoint-settings.js';
import { waitForAttempts } from '../../db/delivery-log.js';
import {
  createTestEvent,
  findEndpoint,
  readEndpointSecrets,
  removeUnstartedTestEvent,
  rotateWebhookSecret,
  setEndpointEvents,
  setEndpointPaused,
} from '../../db/webhook-endpoints.js';
import { startRedelivery } from '../../temporal/client.js';
import type { DashboardDeps } from '../deps.js';
import { PageError } from '../errors.js';
import { renderPage } from '../render.js';
import { ownedOr404, tenantRoute, type DashboardContext } from '../tenancy.js';
import { FIELD_ERRORS, formError } from '../form-errors.js';
import { eventsForm, rotateForm, testEventForm } from '../webhook-forms.js';

const endpointPath = (id: string) => `/dashboard/webhooks/${encodeURIComponent(id)}`;

function redirect(ctx: DashboardContext, path: string): void {
  ctx.status = 303;
  ctx.redirect(path);
}

export function webhookActionRoutes(router: Router, { pool, config, temporal }: DashboardDeps): void {
  router.post(
    '/webhooks/:id/events',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      const form = eventsForm.safeParse(ctx.request.body ?? {}, FIELD_ERRORS);
      if (!form.success) throw new PageError(400, 'Events not saved', formError(form.error));
      ownedOr404((await setEndpointEvents(pool, tenant.issuerId, endpoint.id, form.data.events)) || undefined);
      redirect(ctx, `${endpointPath(endpoint.id)}?done=events`);
    }),
  );

  for (const [action, paused] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    router.post(
      `/webhooks/:id/${action}`,
      tenantRoute(async (ctx, tenant) => {
        const before = paused ? undefined : await findEndpoint(pool, tenant.issuerId, ctx.params.id);
        ownedOr404((await setEndpointPaused(pool, tenant.issuerId, ctx.params.id, paused)) || undefined);
        // Enabled again: the page offers a replay of what it missed (docs/webhooks.md "Auto-disable").
        const from = before && missedFrom(before);
        const until = new Date();
        const missed = from ? `&missed_since=${(await missedDeliveries(pool, ctx.params.id, from, until)).since.toISOString()}&missed_until=${until.toISOString()}` : ''; // prettier-ignore
        redirect(ctx, `${endpointPath(ctx.params.id)}?done=${action}d${missed}`);
      }),
    );
  }

  router.post(
    '/webhooks/:id/secret',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      const secrets = ownedOr404(await readEndpointSecrets(pool, tenant.issuerId, endpoint.id));
      renderPage(ctx, 'webhook-secret', { title: 'Signing secret', endpoint, secrets });
    }),
  );

  const rotatePage = async (ctx: DashboardContext, issuerId: string, error?: string, status = 200) => {
    const endpoint = ownedOr404(await findEndpoint(pool, issuerId, ctx.params.id));
    renderPage(ctx, 'webhook-rotate', { title: 'Rotate signing secret', endpoint, error, form: ctx.request.body ?? {} }, status);
  };

  router.get(
    '/webhooks/:id/rotate',
    tenantRoute((ctx, tenant) => rotatePage(ctx, tenant.issuerId)),
  );

  router.post(
    '/webhooks/:id/rotate',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      const form = rotateForm.safeParse(ctx.request.body ?? {}, FIELD_ERRORS);
      if (!form.success) return rotatePage(ctx, tenant.issuerId, formError(form.error), 400);
      const rotated = ownedOr404(await rotateWebhookSecret(pool, endpoint.id, form.data));
      renderPage(ctx, 'webhook-rotated', { title: 'Secret rotated', endpoint, rotated });
    }),
  );

  router.post(
    '/webhooks/:id/test',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      const form = testEventForm.safeParse(ctx.request.body ?? {}, FIELD_ERRORS);
      if (!form.success) throw new PageError(400, 'Test event not sent', formError(form.error));
      if (endpoint.pausedAt) throw new PageError(409, 'Test event not sent', 'This endpoint is disabled. Enable it to send a test event.');
      if (!endpoint.events.includes(form.data.event))
        throw new PageError(400, 'Test event not sent', `This endpoint is not subscribed to ${form.data.event}.`);
      const delivery = ownedOr404(await createTestEvent(pool, tenant.issuerId, endpoint.id, form.data.event));
      try {
        await startRedelivery(temporal, config.TEMPORAL_TASK_QUEUE, [delivery]);
      } catch (error) {
        // Not started: the event leaves with the error page, so trying again sends one, not two.
        if (await removeUnstartedTestEvent(pool, delivery.eventId)) throw error;
      }
      // The first attempt takes at most the webhook timeout; a little more covers the worker picking it up.
      await waitForAttempts(pool, endpoint.id, delivery.eventId, 1, config.WEBHOOK_TIMEOUT_MS + 3000);
      redirect(ctx, `${endpointPath(endpoint.id)}/deliveries/${encodeURIComponent(delivery.eventId)}?sent=test`);
    }),
  );
}
