// Settings → Webhooks (the dashboard's home): the issuer's endpoints with their health, adding one
// (URL through the same SSRF guard as the CLI and every delivery; the secret shown once, on the
// response page only), one endpoint's page, and removal after a confirmation. The endpoint's other
// actions are in webhook-actions.ts, its delivery log in delivery-log.ts.
import type Router from '@koa/router';
import { attemptDurationsPerDay, attemptsPerHour, HEALTH_WINDOW_HOURS, listEndpointsWithHealth } from '../../db/delivery-summaries.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/vocabulary.js';
import { createWebhookEndpoint, findEndpoint, removeWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { checkWebhookUrl, WebhookUrlRefused } from '../../platform/ssrf-guard.js';
import { deliveriesChart, latencyChart } from '../charts.js';
import type { DashboardDeps } from '../deps.js';
import { renderPage } from '../render.js';
import { ownedOr404, tenantRoute, type DashboardContext, type Tenant } from '../tenancy.js';
import { FIELD_ERRORS, formError } from '../form-errors.js';
import { addForm, utcInputValue } from '../webhook-forms.js';
import { submitOnce, takeReveal } from '../submit-once.js';

/** What a notice query parameter (`?done=…`) on the endpoint page says happened. */
export const ENDPOINT_NOTICES: Record<string, string> = {
  events: 'Events saved. Pending deliveries of events you unsubscribed from are skipped.',
  disabled: 'Endpoint disabled. It receives nothing until you enable it; pending retries are skipped.',
  enabled: 'Endpoint enabled. New events are delivered again; replay a time range to recover what it missed.',
};

interface AddFormState {
  error?: string;
  url?: string;
  events?: string[];
  mode?: string;
}

export function webhookRoutes(router: Router, { pool, config }: DashboardDeps): void {
  // The 7-day charts of the issuer's attempts (of one endpoint when given), as SVG + table HTML.
  const charts = async (tenant: Tenant, endpointId?: string) => ({
    deliveries: deliveriesChart('deliveries-chart', await attemptsPerHour(pool, tenant.issuerId, endpointId), new Date()),
    latency: latencyChart('latency-chart', await attemptDurationsPerDay(pool, tenant.issuerId, endpointId)),
  });

  const listPage = async (ctx: DashboardContext, tenant: Tenant, form: AddFormState = {}, status = 200) => {
    const endpoints = await listEndpointsWithHealth(pool, tenant.issuerId);
    const removed = ctx.query.removed === '1';
    renderPage(
      ctx,
      'webhooks',
      {
        title: 'Webhooks',
        endpoints,
        eventTypes: WEBHOOK_EVENT_TYPES,
        windowHours: HEALTH_WINDOW_HOURS,
        removed,
        charts: await charts(tenant),
        // A card's events by default; webhook_endpoint.disabled (about another endpoint) is opted into.
        form: { url: '', events: WEBHOOK_EVENT_TYPES.filter((type) => type !== 'webhook_endpoint.disabled'), mode: 'live', ...form },
      },
      status,
    );
  };

  router.get(
    '/webhooks',
    tenantRoute((ctx, tenant) => listPage(ctx, tenant)),
  );

  router.post(
    '/webhooks',
    tenantRoute(async (ctx, tenant) => {
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      const echo = {
        url: typeof body.url === 'string' ? body.url : '',
        events: [body.events ?? []].flat().map(String),
        mode: String(body.mode ?? 'live'),
      };
      const form = addForm.safeParse(body, FIELD_ERRORS);
      if (!form.success) return listPage(ctx, tenant, { ...echo, error: formError(form.error) }, 400);
      try {
        await checkWebhookUrl(form.data.url, { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
      } catch (error) {
        if (!(error instanceof WebhookUrlRefused)) throw error;
        return listPage(ctx, tenant, { ...echo, error: `This URL cannot receive webhooks: ${error.reason}.` }, 400);
      }
      const max = config.WEBHOOK_MAX_ENDPOINTS_PER_ISSUER;
      // Once per form sent (a double click adds one endpoint); its page shows the secret (submit-once.ts).
      return submitOnce(ctx, pool, async () => {
        const created = await createWebhookEndpoint(pool, { issuerId: tenant.issuerId, ...form.data }, max);
        if (!created.ok) {
          const error = `You already have ${max} endpoints, the maximum. Remove one first.`;
          return listPage(ctx, tenant, { ...echo, error }, created.reason === 'limit_reached' ? 409 : 404).then(() => undefined);
        }
        return { path: `/dashboard/webhooks/${created.endpoint.id}`, reveal: { endpointId: created.endpoint.id, secret: created.secret } };
      });
    }),
  );

  router.get(
    '/webhooks/:id',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404((await listEndpointsWithHealth(pool, tenant.issuerId)).find((e) => e.id === ctx.params.id));
      const reveal = await takeReveal(ctx, pool);
      if (reveal?.endpointId === endpoint.id) {
        return renderPage(ctx, 'webhook-created', { title: 'Webhook endpoint added', endpoint, secret: reveal.secret });
      }
      const notice = typeof ctx.query.done === 'string' ? ENDPOINT_NOTICES[ctx.query.done] : undefined;
      // After "Enable endpoint": what it missed while disabled, offered as a replay of that range (the
      // replay form's minutes: the start rounded down, the end up).
      const since = new Date(String(ctx.query.missed_since ?? ''));
      const until = new Date(String(ctx.query.missed_until ?? ''));
      const missed =
        !endpoint.pausedAt && !Number.isNaN(since.getTime()) && !Number.isNaN(until.getTime()) && since < until
          ? { since: utcInputValue(since), until: utcInputValue(new Date(until.getTime() + 60_000)) }
          : undefined;
      renderPage(ctx, 'webhook', {
        title: 'Webhook endpoint',
        endpoint,
        eventTypes: WEBHOOK_EVENT_TYPES,
        windowHours: HEALTH_WINDOW_HOURS,
        notice,
        missed,
        charts: await charts(tenant, endpoint.id),
      });
    }),
  );

  router.get(
    '/webhooks/:id/remove',
    tenantRoute(async (ctx, tenant) => {
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      renderPage(ctx, 'webhook-remove', { title: 'Remove webhook endpoint', endpoint });
    }),
  );

  router.post(
    '/webhooks/:id/remove',
    tenantRoute(async (ctx, tenant) => {
      // An endpoint never changes issuer, so finding it among the issuer's is the ownership check.
      const endpoint = ownedOr404(await findEndpoint(pool, tenant.issuerId, ctx.params.id));
      await removeWebhookEndpoint(pool, endpoint.id);
      ctx.status = 303;
      ctx.redirect('/dashboard/webhooks?removed=1');
    }),
  );
}
