// Settings → Tracking page (the issuer's branding of the cardholder's page: the same rules as PATCH
// /v1/tracking_page, domain/tracking-links.ts) and a dispatch's tracking links: the list, a new link
// (made once per form sent, submit-once.ts; its URL shown once, on the page the browser ends on, as
// the API answers it once) and revoking one.
// Everything is scoped by the tenant's issuer; another issuer's dispatch is the same 404 page as an
// unknown one (tenancy.ts). docs/tracking-page.md "Tracking links and the tracking page".
import type Router from '@koa/router';
import { z } from 'zod';
import { findDispatch } from '../../db/dispatches.js';
import {
  createTrackingLink,
  findBranding,
  findTrackingLink,
  pageTrackingLinks,
  revokeTrackingLink,
  updateBranding,
} from '../../db/tracking-links.js';
import { localeTag, UUID_V4 } from '../../domain/field-schemas.js';
import {
  BRANDING_FIELDS,
  DEFAULT_LINK_LIFETIME_DAYS,
  linkExpiry,
  MAX_LINK_LIFETIME_DAYS,
  newTrackingToken,
  trackingLinkId,
  trackingPageBrandingPatch,
} from '../../domain/tracking-links.js';
import { publicBaseUrl } from '../../platform/config.js';
import type { DashboardDeps } from '../deps.js';
import { FIELD_ERRORS, formErrors } from '../form-errors.js';
import { pageNotFound } from '../errors.js';
import { renderPage } from '../render.js';
import { submitOnce, takeReveal } from '../submit-once.js';
import { ownedOr404, tenantRoute, type DashboardContext, type Tenant } from '../tenancy.js';

export const TRACKING_SETTINGS_PATH = '/dashboard/settings/tracking-page';
const DAY_MS = 86_400_000;
/** The links a dispatch's page lists: far more than any issuer makes for one card. */
const LINKS_SHOWN = 100;

/** The form's fields as text, an empty field meaning "not set". */
const brandingForm = z.object(Object.fromEntries(BRANDING_FIELDS.map((field) => [field, z.string().max(4000).optional()])));

const linkForm = z.object({
  expires_in_days: z.coerce
    .number('Enter a number of days.')
    .int('Enter a whole number of days.')
    .min(1, 'At least 1 day.')
    .max(MAX_LINK_LIFETIME_DAYS, `At most ${MAX_LINK_LIFETIME_DAYS} days.`),
  locale: z.union([z.literal(''), localeTag], 'Enter a language tag such as fr or de-AT, or leave it empty.'),
  require_postal_code: z.literal('on').optional(),
});

export function trackingPageRoutes(router: Router, { pool, config }: DashboardDeps): void {
  const origin = publicBaseUrl(config);

  router.get(
    '/settings/tracking-page',
    tenantRoute(async (ctx, tenant) => {
      const branding = await findBranding(pool, tenant.issuerId);
      const values = Object.fromEntries(BRANDING_FIELDS.map((field) => [field, branding[field] ?? '']));
      renderPage(ctx, 'tracking-page-settings', { title: 'Tracking page', values, errors: {}, saved: ctx.query.saved === '1' });
    }),
  );

  router.post(
    '/settings/tracking-page',
    tenantRoute(async (ctx, tenant) => {
      const form = brandingForm.parse(ctx.request.body ?? {}, FIELD_ERRORS);
      const patch = Object.fromEntries(BRANDING_FIELDS.map((field) => [field, form[field]?.trim() ? form[field]!.trim() : null]));
      const parsed = trackingPageBrandingPatch.safeParse(patch, FIELD_ERRORS);
      if (!parsed.success) {
        const errors = formErrors(parsed.error);
        const values = Object.fromEntries(BRANDING_FIELDS.map((field) => [field, form[field] ?? '']));
        return renderPage(ctx, 'tracking-page-settings', { title: 'Tracking page', values, errors, saved: false }, 400);
      }
      await updateBranding(pool, tenant.issuerId, parsed.data);
      ctx.status = 303;
      ctx.redirect(`${TRACKING_SETTINGS_PATH}?saved=1`);
    }),
  );

  /** The tenant's dispatch of the path, in either mode, or the 404 page. */
  const ownDispatch = async (ctx: DashboardContext, tenant: Tenant) => {
    if (!UUID_V4.test(ctx.params.id)) throw pageNotFound();
    const found = await findDispatch(pool, ctx.params.id.toLowerCase());
    return ownedOr404(found?.issuerId === tenant.issuerId ? found : undefined);
  };

  const linksPage = async (
    ctx: DashboardContext,
    tenant: Tenant,
    extra: { errors?: Record<string, string>; values?: unknown } = {},
    status = 200,
  ) => {
    // prettier-ignore
    const dispatch = await ownDispatch(ctx, tenant);
    const { items } = await pageTrackingLinks(pool, dispatch.id, { limit: LINKS_SHOWN });
    renderPage(
      ctx,
      'tracking-links',
      {
        title: 'Tracking links',
        dispatch,
        links: items,
        now: new Date(),
        revoked: typeof ctx.query.revoked === 'string' ? ctx.query.revoked : undefined,
        errors: extra.errors ?? {},
        values: extra.values ?? { expires_in_days: String(DEFAULT_LINK_LIFETIME_DAYS), locale: dispatch.locale ?? '', require_postal_code: false }, // prettier-ignore
        maxDays: MAX_LINK_LIFETIME_DAYS,
      },
      status,
    );
  };

  router.get(
    '/dispatches/:id/tracking-links',
    tenantRoute(async (ctx, tenant) => {
      const dispatch = await ownDispatch(ctx, tenant);
      const reveal = await takeReveal(ctx, pool);
      const link = typeof reveal?.linkId === 'string' ? await findTrackingLink(pool, dispatch.id, reveal.linkId) : undefined;
      if (link) return renderPage(ctx, 'tracking-link-created', { title: 'Tracking link created', dispatch, link, url: reveal!.url });
      return linksPage(ctx, tenant);
    }),
  );

  router.post(
    '/dispatches/:id/tracking-links',
    tenantRoute(async (ctx, tenant) => {
      const dispatch = await ownDispatch(ctx, tenant);
      const body = (ctx.request.body ?? {}) as Record<string, string | undefined>;
      const form = linkForm.safeParse(body, FIELD_ERRORS);
      if (!form.success) {
        const errors = formErrors(form.error);
        const values = { expires_in_days: body.expires_in_days ?? '', locale: body.locale ?? '', require_postal_code: body.require_postal_code === 'on' }; // prettier-ignore
        return linksPage(ctx, tenant, { errors, values }, 400);
      }
      const now = new Date();
      const expiry = linkExpiry(new Date(now.getTime() + form.data.expires_in_days * DAY_MS).toISOString(), now);
      if ('problem' in expiry) throw pageNotFound(); // unreachable: the form's bounds are the rule's
      // Once per form sent (a double click, a resubmission makes one link); the page it leads to
      // shows the link's URL once, and a reload of it no more (submit-once.ts).
      return submitOnce(ctx, pool, async () => {
        const { token, hash } = newTrackingToken();
        const link = await createTrackingLink(pool, {
          dispatchId: dispatch.id,
          issuerId: tenant.issuerId,
          mode: dispatch.mode,
          tokenHash: hash,
          locale: form.data.locale || null,
          requirePostalCode: form.data.require_postal_code === 'on',
          expiresAt: expiry.expiresAt,
        });
        return {
          path: `/dashboard/dispatches/${dispatch.id}/tracking-links`,
          dispatchId: dispatch.id,
          reveal: { linkId: link.id, url: `${origin}/t/${token}` },
        };
      });
    }),
  );

  router.post(
    '/dispatches/:id/tracking-links/:linkId/revoke',
    tenantRoute(async (ctx, tenant) => {
      const dispatch = await ownDispatch(ctx, tenant);
      const linkId = trackingLinkId.safeParse(ctx.params.linkId);
      if (!linkId.success || !(await revokeTrackingLink(pool, dispatch.id, linkId.data))) throw pageNotFound();
      ctx.status = 303;
      ctx.redirect(`/dashboard/dispatches/${dispatch.id}/tracking-links?revoked=${encodeURIComponent(linkId.data)}`);
    }),
  );
}
