// Settings → Tracking feeds (docs/tracking-feeds.md, docs/dashboard.md): the issuer's feeds of both
// modes with their last 24 hours' counts, a new feed (the URL to paste with the provider's own words
// for where; Shippo's token shown once, on the response page only, as the API answers it once), a
// feed's page (its URL, setting its secret, its unmatched checkpoints and those it ignored, with
// why) and revoking one, after a confirmation page. The same
// rules and tables as /v1/tracking_feeds (api/routes/tracking-feeds.ts); the secret is never shown.
// Everything is scoped by the tenant's issuer; another issuer's feed is the 404 page (tenancy.ts).
import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import { z } from 'zod';
import { decodeUnmatchedCursor, encodeUnmatchedCursor, pageIgnored, pageUnmatched } from '../../db/feed-checkpoints.js';
import {
  createFeed,
  findIssuerFeed,
  pageFeeds,
  recentFeedCounts,
  revokeFeed,
  updateFeed,
  type TrackingFeed,
} from '../../db/tracking-feeds.js';
import { BEARER_SECRET, shownCheckpointTime } from '../../domain/tracking-feed-schemas.js';
import { FEED_PROVIDER_MODULES, FEED_PROVIDERS, type CheckpointTime, type FeedProvider } from '../../domain/tracking-feeds/index.js';
import { publicBaseUrl } from '../../platform/config.js';
import type { DashboardDeps } from '../deps.js';
import { FIELD_ERRORS, firstProblem, formErrors } from '../form-errors.js';
import { pageNotFound } from '../errors.js';
import { renderPage } from '../render.js';
import { submitOnce, takeReveal } from '../submit-once.js';
import { ownedOr404, tenantRoute } from '../tenancy.js';

export const TRACKING_FEEDS_PATH = '/dashboard/settings/tracking-feeds';
/** Far more feeds than an issuer has; a page of one feed's unmatched (or ignored) checkpoints. */
const SHOWN = 100;

/** As the API takes it (domain/tracking-feed-schemas.ts): any text for an HMAC key, visible ASCII for Ship24's header. */
const secretField = (provider: FeedProvider) => {
  const text = z
    .string()
    .trim()
    .min(8, 'Paste the webhook secret the provider shows (at least 8 characters).')
    .max(512, 'At most 512 characters.')
    .regex(/^\P{Cc}+$/u, 'No control characters.');
  return provider === 'ship24' ? text.regex(BEARER_SECRET, 'Visible characters only, no spaces (Ship24 sends it in a header).') : text;
};
const createForm = z.object({
  provider: z.enum(FEED_PROVIDERS, 'Choose a provider.'),
  mode: z.enum(['live', 'test'], 'Choose live or test.'),
  secret: z.string().optional(),
  description: z.string().trim().max(200, 'At most 200 characters.').optional(),
});

export function trackingFeedRoutes(router: Router, { pool, config }: DashboardDeps): void {
  const urlOf = (id: string) => `${publicBaseUrl(config)}/v1/inbound/${id}`;
  const providers = FEED_PROVIDERS.map((name) => ({ name, needsSecret: FEED_PROVIDER_MODULES[name].secret === 'provider' }));

  const listPage = async (
    ctx: Parameters<Parameters<typeof tenantRoute>[0]>[0],
    issuerId: string,
    form: { errors: Record<string, string>; values: Record<string, string> },
    status = 200,
  ) => {
    // prettier-ignore
    const feeds: TrackingFeed[] = [];
    for (const mode of ['live', 'test'] as const) feeds.push(...(await pageFeeds(pool, issuerId, mode, { limit: SHOWN })).items);
    const counts = await recentFeedCounts(
      pool,
      feeds.map((feed) => feed.id),
    );
    renderPage(ctx, 'tracking-feeds', { title: 'Tracking feeds', feeds: feeds.map((feed) => ({ ...feed, url: urlOf(feed.id), counts: counts.get(feed.id)! })), providers, revoked: typeof ctx.query.revoked === 'string' ? ctx.query.revoked : undefined, ...form }, status); // prettier-ignore
  };

  router.get(
    '/settings/tracking-feeds',
    tenantRoute((ctx, tenant) => listPage(ctx, tenant.issuerId, { errors: {}, values: { provider: 'easypost', mode: 'live' } })),
  );

  router.post(
    '/settings/tracking-feeds',
    tenantRoute(async (ctx, tenant) => {
      const body = (ctx.request.body ?? {}) as Record<string, string | undefined>;
      const form = createForm.safeParse(body, FIELD_ERRORS);
      const errors: Record<string, string> = form.success ? {} : formErrors(form.error);
      const needsSecret = form.success && FEED_PROVIDER_MODULES[form.data.provider].secret === 'provider';
      const secret = needsSecret ? secretField(form.data.provider).safeParse(body.secret ?? '', FIELD_ERRORS) : undefined;
      if (secret && !secret.success) errors.secret = firstProblem(secret.error);
      if (!form.success || Object.keys(errors).length > 0) {
        return listPage(ctx, tenant.issuerId, { errors, values: { provider: body.provider ?? '', mode: body.mode ?? 'live', description: body.description ?? '' } }, 400); // prettier-ignore
      }
      // Once per form sent (a double click makes one feed); the feed's page shows the URL with
      // Shippo's token once, and a reload of it no more (submit-once.ts).
      return submitOnce(ctx, pool, async () => {
        const token = needsSecret ? undefined : randomBytes(24).toString('base64url');
        const feed = await createFeed(pool, {
          issuerId: tenant.issuerId,
          mode: form.data.mode,
          provider: form.data.provider,
          secret: secret?.success ? secret.data : token!,
          description: form.data.description || null,
        });
        const url = token ? `${urlOf(feed.id)}?token=${token}` : urlOf(feed.id);
        return { path: `${TRACKING_FEEDS_PATH}/${feed.id}`, reveal: { feedId: feed.id, url } };
      });
    }),
  );

  router.get(
    '/settings/tracking-feeds/:id',
    tenantRoute(async (ctx, tenant) => {
      const feed = ownedOr404(await findIssuerFeed(pool, tenant.issuerId, ctx.params.id));
      const reveal = await takeReveal(ctx, pool);
      if (reveal?.feedId === feed.id) {
        return renderPage(ctx, 'tracking-feed', feedView(feed, { created: true, url: reveal.url, unmatched: [], ignored: [] }));
      }
      // A page of the unmatched checkpoints and one of the ignored, each newest first: `cursor` and
      // `ignored_cursor` (from each list's "Older checkpoints" link, which keeps the other's)
      // continue after the last one shown; one edited or made up shows the newest, saying so.
      const cursors = { cursor: ctx.query.cursor, ignored_cursor: ctx.query.ignored_cursor };
      const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
      const cursor = text(cursors.cursor);
      const ignoredCursor = text(cursors.ignored_cursor);
      const after = cursor === undefined ? undefined : decodeUnmatchedCursor(cursor);
      const ignoredAfter = ignoredCursor === undefined ? undefined : decodeUnmatchedCursor(ignoredCursor);
      const { items, next } = await pageUnmatched(pool, feed.id, { limit: SHOWN, after });
      const unmatched = items.map((kept) => ({ ...kept, shownTime: shownCheckpointTime(kept.time as CheckpointTime) }));
      const ignoredPage = await pageIgnored(pool, feed.id, { limit: SHOWN, after: ignoredAfter });
      const here = `${TRACKING_FEEDS_PATH}/${feed.id}`;
      /** This page's link with one list's cursor set (or dropped), the other list's kept as it is shown. */
      const link = (changes: { cursor?: string | null; ignored_cursor?: string | null }) => {
        const query = new URLSearchParams();
        const kept = { cursor: after && cursor, ignored_cursor: ignoredAfter && ignoredCursor, ...changes };
        for (const [name, value] of Object.entries(kept)) if (value) query.set(name, value);
        return query.size > 0 ? `${here}?${query}` : here;
      };
      const paging = {
        olderUrl: next && link({ cursor: encodeUnmatchedCursor(next) }),
        newestUrl: after && link({ cursor: null }),
        cursorError: cursor !== undefined && !after,
        ignoredOlderUrl: ignoredPage.next && link({ ignored_cursor: encodeUnmatchedCursor(ignoredPage.next) }),
        ignoredNewestUrl: ignoredAfter && link({ ignored_cursor: null }),
        ignoredCursorError: ignoredCursor !== undefined && !ignoredAfter,
      };
      const status = paging.cursorError || paging.ignoredCursorError ? 400 : 200;
      renderPage(ctx, 'tracking-feed', feedView(feed, { created: false, url: urlOf(feed.id), unmatched, ignored: ignoredPage.items, saved: ctx.query.saved === '1', ...paging }), status); // prettier-ignore
    }),
  );

  router.post(
    '/settings/tracking-feeds/:id/secret',
    tenantRoute(async (ctx, tenant) => {
      const feed = ownedOr404(await findIssuerFeed(pool, tenant.issuerId, ctx.params.id));
      if (FEED_PROVIDER_MODULES[feed.provider as (typeof FEED_PROVIDERS)[number]].secret !== 'provider') throw pageNotFound();
      const secret = secretField(feed.provider as FeedProvider).safeParse((ctx.request.body as Record<string, string> | undefined)?.secret ?? '', FIELD_ERRORS); // prettier-ignore
      if (!secret.success) {
        return renderPage(ctx, 'tracking-feed', feedView(feed, { created: false, url: urlOf(feed.id), unmatched: [], ignored: [], secretError: firstProblem(secret.error) }), 400); // prettier-ignore
      }
      await updateFeed(pool, tenant.issuerId, feed.mode, feed.id, { secret: secret.data });
      ctx.status = 303;
      ctx.redirect(`${TRACKING_FEEDS_PATH}/${feed.id}?saved=1`);
    }),
  );

  router.get(
    '/settings/tracking-feeds/:id/revoke',
    tenantRoute(async (ctx, tenant) => {
      const feed = ownedOr404(await findIssuerFeed(pool, tenant.issuerId, ctx.params.id));
      renderPage(ctx, 'tracking-feed-revoke', { title: 'Revoke tracking feed', feed });
    }),
  );

  router.post(
    '/settings/tracking-feeds/:id/revoke',
    tenantRoute(async (ctx, tenant) => {
      const feed = ownedOr404(await findIssuerFeed(pool, tenant.issuerId, ctx.params.id));
      await revokeFeed(pool, tenant.issuerId, feed.mode, feed.id);
      ctx.status = 303;
      ctx.redirect(`${TRACKING_FEEDS_PATH}?revoked=${encodeURIComponent(feed.id)}`);
    }),
  );

  function feedView(feed: TrackingFeed, extra: Record<string, unknown>) {
    const module = FEED_PROVIDER_MODULES[feed.provider as (typeof FEED_PROVIDERS)[number]];
    return { title: `Tracking feed ${feed.id}`, feed, setupHint: module.setupHint, needsSecret: module.secret === 'provider', saved: false, secretError: undefined, ...extra }; // prettier-ignore
  }
}
