// Tracking links and the tracking page's branding as an API (docs/tracking-page.md
// "Tracking links and the tracking page"): create a link for a dispatch (its token shown once, in
// `url`), list a dispatch's links (never a token or a url), revoke one at once, and read or change
// the issuer's branding of the page. Every route needs `dispatches:write`; a dispatch is checked as
// on every route that names one (routes/access.ts: the other mode's → 404, another issuer's → 403).
// Check order as docs/http-contract.md "Common rules": path and body (400), the scope (403), then
// the dispatch (404/403).
import type Router from '@koa/router';
import { findDispatch } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import {
  createTrackingLink,
  decodeLinkCursor,
  encodeLinkCursor,
  findBranding,
  pageTrackingLinks,
  revokeTrackingLink,
  updateBranding,
  type TrackingLink,
} from '../../db/tracking-links.js';
import { LIST_LIMIT_DEFAULT } from '../../domain/field-schemas.js';
import {
  linkExpiry,
  newTrackingToken,
  trackingLinkCreateBody,
  trackingLinkId,
  trackingLinkListQuery,
  trackingPageBrandingPatch,
} from '../../domain/tracking-links.js';
import { publicBaseUrl, type Config } from '../../platform/config.js';
import { badRequest, notFound, parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { jsonBody, optionalJsonBody } from '../middleware/json-body.js';
import { checkAccessOrErased, dispatchIdParam } from './access.js';
import { queryOnce } from '../route-params.js';

export const TRACKING_SCOPE = 'dispatches:write';

function toLinkBody(link: TrackingLink) {
  return {
    id: link.id,
    expires_at: link.expiresAt.toISOString(),
    locale: link.locale,
    require_postal_code: link.requirePostalCode,
    created_at: link.createdAt.toISOString(),
  };
}

export function trackingLinkRoutes(router: Router, deps: { pool: Pool; config: Config }): void {
  const { pool } = deps;
  const origin = publicBaseUrl(deps.config);

  router.post('/v1/dispatches/:id/tracking_links', optionalJsonBody(), async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const body = parseOrBadRequest(trackingLinkCreateBody, ctx.request.body);
    const expiry = linkExpiry(body.expires_at, new Date());
    if ('problem' in expiry) throw badRequest(expiry.problem);
    const key = checkScope(ctx.state.apiKey, TRACKING_SCOPE);
    const dispatch = await checkAccessOrErased(pool, key, id, await findDispatch(pool, id));
    const { token, hash } = newTrackingToken();
    const link = await createTrackingLink(pool, {
      dispatchId: id,
      issuerId: key.issuerId,
      mode: key.mode,
      tokenHash: hash,
      locale: body.locale ?? dispatch.locale,
      requirePostalCode: body.require_postal_code ?? false,
      expiresAt: expiry.expiresAt,
    });
    ctx.status = 201;
    ctx.body = { ...toLinkBody(link), url: `${origin}/t/${token}` };
  });

  router.get('/v1/dispatches/:id/tracking_links', async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const query = parseOrBadRequest(trackingLinkListQuery, { ...queryOnce(ctx.query) });
    const after = query.cursor === undefined ? undefined : decodeLinkCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');
    const key = checkScope(ctx.state.apiKey, TRACKING_SCOPE);
    await checkAccessOrErased(pool, key, id, await findDispatch(pool, id));
    const page = await pageTrackingLinks(pool, id, { limit: query.limit ?? LIST_LIMIT_DEFAULT, after });
    ctx.body = {
      data: page.items.map((link) => ({ ...toLinkBody(link), revoked_at: link.revokedAt?.toISOString() ?? null })),
      next_cursor: page.next ? encodeLinkCursor(page.next) : null,
    };
  });

  router.delete('/v1/dispatches/:id/tracking_links/:link_id', async (ctx) => {
    const id = dispatchIdParam(ctx.params.id);
    const linkId = parseOrBadRequest(trackingLinkId, ctx.params.link_id, 'link_id');
    const key = checkScope(ctx.state.apiKey, TRACKING_SCOPE);
    await checkAccessOrErased(pool, key, id, await findDispatch(pool, id));
    if (!(await revokeTrackingLink(pool, id, linkId))) throw notFound(`no tracking link ${linkId} for dispatch ${id}`);
    ctx.status = 204;
  });

  router.get('/v1/tracking_page', async (ctx) => {
    const key = checkScope(ctx.state.apiKey, TRACKING_SCOPE);
    ctx.body = await findBranding(pool, key.issuerId);
  });

  router.patch('/v1/tracking_page', jsonBody(), async (ctx) => {
    const patch = parseOrBadRequest(trackingPageBrandingPatch, ctx.request.body);
    const key = checkScope(ctx.state.apiKey, TRACKING_SCOPE);
    ctx.body = await updateBranding(pool, key.issuerId, patch);
  });
}
