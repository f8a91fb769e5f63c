// Dispatches: the search (by id, status, destination country and registration date, one mode at a
// time, newest first, a page at a time: the list query of GET /v1/dispatches) and the page of one
// dispatch: its status record exactly as GET /v1/status/{id} sends it, the carrier events, the
// predictions over time, the webhook events it caused and a link to its workflow in the Temporal UI.
import type Router from '@koa/router';
import { listCarrierEvents } from '../../db/carrier-events.js';
import { listDispatchWebhookEvents } from '../../db/delivery-summaries.js';
import type { Registration, StatusRecord } from '../../domain/dispatch-schemas.js';
import { UUID_V4 } from '../../domain/field-schemas.js';
import { DISPATCH_STATUSES, type EventEffect } from '../../domain/vocabulary.js';
import { findDispatch, listDispatches } from '../../db/dispatches.js';
import { listPredictions } from '../../db/predictions.js';
import type { Config } from '../../platform/config.js';
import type { DashboardDeps } from '../deps.js';
import { pageNotFound } from '../errors.js';
import { listFilter, parseSearch, searchUrl } from '../dispatch-search.js';
import { renderPage } from '../render.js';
import { ownedOr404, tenantRoute } from '../tenancy.js';

/** What the workflow did with a carrier event, in words. */
const EFFECTS: Record<EventEffect, string> = {
  applied: 'Applied: changed the status',
  exception_repeated: 'New exception (status unchanged)',
  stale: 'Counted, no change: older than the latest exception or status',
  after_delivery: 'Ignored: the card was delivered',
  backward: 'Counted, no change: below the current status',
  unchanged: 'No change: already in this status',
  workflow_closed: 'Refused (409): the dispatch was closed without delivery',
  rejected: 'Refused: the service could not apply it (see the operator log)',
};

// Carrier feeds and webhook attempts are seconds apart: the minute of render.ts `time` is too coarse.
const exact = (date: Date) => `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

export function dispatchRoutes(router: Router, { pool, config }: DashboardDeps): void {
  router.get(
    '/dispatches',
    tenantRoute(async (ctx, tenant) => {
      const search = parseSearch(ctx.query);
      const form = { title: 'Dispatches', values: search.values, statuses: DISPATCH_STATUSES };
      if (search.kind === 'invalid') return renderPage(ctx, 'dispatches', { ...form, errors: search.errors }, 400);
      if (search.kind === 'open') return ctx.redirect(`/dashboard/dispatches/${search.id}`);
      const page = await listDispatches(pool, listFilter(search.query, tenant.issuerId));
      renderPage(ctx, 'dispatches', {
        ...form,
        errors: {},
        mode: search.query.mode,
        dispatches: page.items.map((item) => ({ ...item, record: item.record as StatusRecord, createdAt: new Date(item.createdAt) })),
        nextUrl: page.next && searchUrl(search.query, page.next),
        firstUrl: search.query.cursor && searchUrl(search.query),
        filtered: Boolean(search.query.status || search.query.country || search.query.from || search.query.to),
      });
    }),
  );

  router.get(
    '/dispatches/:id',
    tenantRoute(async (ctx, tenant) => {
      if (!UUID_V4.test(ctx.params.id)) throw pageNotFound();
      const id = ctx.params.id.toLowerCase();
      // Either mode: the page says which (the search shows one mode at a time).
      const found = await findDispatch(pool, id);
      const dispatch = ownedOr404(found?.issuerId === tenant.issuerId ? found : undefined);
      const [carrierEvents, predictions, webhookEvents] = await Promise.all([
        listCarrierEvents(pool, id),
        listPredictions(pool, id),
        listDispatchWebhookEvents(pool, tenant.issuerId, id),
      ]);
      // The very text GET /v1/status/{id} sends (the stored record), only indented for reading.
      const record = JSON.parse(dispatch.recordJson) as StatusRecord;
      const registration = dispatch.registration as Partial<Pick<Registration, 'carrier' | 'tracking_number' | 'reference'>>;
      renderPage(ctx, 'dispatch', {
        title: `Dispatch ${id}`,
        dispatch,
        record,
        recordJson: JSON.stringify(record, null, 2),
        registration,
        carrierEvents,
        predictions,
        webhookEvents,
        effects: EFFECTS,
        exact,
        workflow: { id, namespace: config.TEMPORAL_NAMESPACE, url: workflowUiUrl(config, id) },
      });
    }),
  );
}

/** The workflow's page in the Temporal Web UI (its id is the dispatch id); undefined when no UI is known. */
export function workflowUiUrl(config: Config, workflowId: string): string | undefined {
  if (!config.TEMPORAL_UI_URL) return undefined;
  const ui = config.TEMPORAL_UI_URL.replace(/\/+$/, '');
  return `${ui}/namespaces/${encodeURIComponent(config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(workflowId)}`;
}
