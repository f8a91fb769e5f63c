// Tracking feeds as an API (docs/tracking-feeds.md "Feeds", DESIGN §10): create, list, read, update
// (secret, description), revoke, the checkpoints no dispatch matched yet and those it ignored (with
// why), for the key's issuer
// and mode only (test keys make test feeds, which match only test dispatches; another issuer's, the
// other mode's, a revoked or an unknown feed → 404). Scope `events:write`: a feed writes carrier
// events. The secret is never answered; Shippo's generated token only in the create answer's `url`.
// Check order as docs/http-contract.md "Common rules": the path id and the body (400) before the
// key's scope (403), then the feed (404).
import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import {
  decodeUnmatchedCursor,
  dropExpiredUnmatched,
  encodeUnmatchedCursor,
  pageIgnored,
  pageUnmatched,
  type KeptCheckpoint,
  type KeptIgnored,
} from '../../db/feed-checkpoints.js';
import type { Pool } from '../../db/pool.js';
import {
  createFeed,
  decodeFeedCursor,
  encodeFeedCursor,
  findFeed,
  pageFeeds,
  recentFeedCounts,
  revokeFeed,
  updateFeed,
  zeroCounts,
  type FeedCounts,
  type TrackingFeed,
} from '../../db/tracking-feeds.js';
import { LIST_LIMIT_DEFAULT } from '../../domain/field-schemas.js';
import {
  BEARER_SECRET,
  BEARER_SECRET_MESSAGE,
  feedCreateBody,
  feedId,
  feedListQuery,
  feedUpdateBody,
  shownCheckpointTime,
} from '../../domain/tracking-feed-schemas.js';
import { FEED_PROVIDER_MODULES } from '../../domain/tracking-feeds/index.js';
import type { CheckpointTime, FeedProvider } from '../../domain/tracking-feeds/provider.js';
import { publicBaseUrl, type Config } from '../../platform/config.js';
import { badRequest, notFound, parseOrBadRequest } from '../errors.js';
import type { FeedCache } from '../feed-cache.js';
import { checkScope } from '../middleware/auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { queryOnce } from '../route-params.js';

export interface FeedRouteDeps {
  pool: Pool;
  config: Config;
  feeds: FeedCache;
}

const feedNotFound = (id: string) => notFound(`no tracking feed ${id} for this key's issuer and mode`);
const feedIdParam = (id: string) => parseOrBadRequest(feedId, id, 'feed_id');

export function trackingFeedRoutes(router: Router, deps: FeedRouteDeps): void {
  const { pool } = deps;
  const urlOf = (id: string, token?: string) => `${publicBaseUrl(deps.config)}/v1/inbound/${id}${token ? `?token=${token}` : ''}`;
  const toBody = (feed: TrackingFeed, counts: FeedCounts, token?: string) => ({
    id: feed.id,
    provider: feed.provider,
    url: urlOf(feed.id, token),
    description: feed.description,
    created_at: feed.createdAt.toISOString(),
    last_received_at: feed.lastReceivedAt?.toISOString() ?? null,
    counts,
  });
  const withCounts = async (feed: TrackingFeed) => toBody(feed, (await recentFeedCounts(pool, [feed.id])).get(feed.id)!);

  router.post('/v1/tracking_feeds', jsonBody(), async (ctx) => {
    const body = parseOrBadRequest(feedCreateBody, ctx.request.body);
    const key = checkScope(ctx.state.apiKey, 'events:write');
    // The schema requires the secret of the providers that sign with their own; a token of ≥ 128
    // random bits (DESIGN §10: 24 bytes) for the others.
    const generated = !('secret' in body);
    const secret = 'secret' in body ? body.secret : randomBytes(24).toString('base64url');
    const feed = await createFeed(pool, { issuerId: key.issuerId, mode: key.mode, provider: body.provider, secret, description: body.description ?? null }); // prettier-ignore
    ctx.status = 201;
    ctx.set('Location', `/v1/tracking_feeds/${feed.id}`);
    ctx.body = toBody(feed, zeroCounts(), generated ? secret : undefined);
  });

  router.get('/v1/tracking_feeds', async (ctx) => {
    const query = parseOrBadRequest(feedListQuery, { ...queryOnce(ctx.query) });
    const after = query.cursor === undefined ? undefined : decodeFeedCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');
    const key = checkScope(ctx.state.apiKey, 'events:write');
    const page = await pageFeeds(pool, key.issuerId, key.mode, { limit: query.limit ?? LIST_LIMIT_DEFAULT, after });
    const counts = await recentFeedCounts(
      pool,
      page.items.map((feed) => feed.id),
    );
    ctx.body = {
      data: page.items.map((feed) => toBody(feed, counts.get(feed.id)!)),
      next_cursor: page.next ? encodeFeedCursor(page.next) : null,
    };
  });

  router.get('/v1/tracking_feeds/:feed_id', async (ctx) => {
    const id = feedIdParam(ctx.params.feed_id);
    const key = checkScope(ctx.state.apiKey, 'events:write');
    const feed = await findFeed(pool, key.issuerId, key.mode, id);
    if (!feed) throw feedNotFound(id);
    ctx.body = await withCounts(feed);
  });

  router.patch('/v1/tracking_feeds/:feed_id', jsonBody(), async (ctx) => {
    const id = feedIdParam(ctx.params.feed_id);
    const body = parseOrBadRequest(feedUpdateBody, ctx.request.body);
    const key = checkScope(ctx.state.apiKey, 'events:write');
    const before = await findFeed(pool, key.issuerId, key.mode, id);
    if (!before) throw feedNotFound(id);
    if (body.secret !== undefined && FEED_PROVIDER_MODULES[before.provider as FeedProvider].secret === 'generated-token') {
      throw badRequest(
        `secret: ${before.provider} feeds authenticate with the token the service generated; create a new feed for a new token`,
      );
    }
    if (body.secret !== undefined && before.provider === 'ship24' && !BEARER_SECRET.test(body.secret)) {
      throw badRequest(`secret: ${BEARER_SECRET_MESSAGE}`);
    }
    const feed = await updateFeed(pool, key.issuerId, key.mode, id, { secret: body.secret, description: body.description });
    if (!feed) throw feedNotFound(id);
    deps.feeds.forget(id);
    ctx.body = await withCounts(feed);
  });

  router.delete('/v1/tracking_feeds/:feed_id', async (ctx) => {
    const id = feedIdParam(ctx.params.feed_id);
    const key = checkScope(ctx.state.apiKey, 'events:write');
    if (!(await revokeFeed(pool, key.issuerId, key.mode, id))) throw feedNotFound(id);
    deps.feeds.forget(id);
    ctx.status = 204;
  });

  router.get('/v1/tracking_feeds/:feed_id/unmatched', async (ctx) => {
    const id = feedIdParam(ctx.params.feed_id);
    const query = parseOrBadRequest(feedListQuery, { ...queryOnce(ctx.query) });
    const after = query.cursor === undefined ? undefined : decodeUnmatchedCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');
    const key = checkScope(ctx.state.apiKey, 'events:write');
    if (!(await findFeed(pool, key.issuerId, key.mode, id))) throw feedNotFound(id);
    await dropExpiredUnmatched(pool, id);
    const page = await pageUnmatched(pool, id, { limit: query.limit ?? LIST_LIMIT_DEFAULT, after });
    ctx.body = { data: page.items.map(toUnmatchedBody), next_cursor: page.next ? encodeUnmatchedCursor(page.next) : null };
  });

  router.get('/v1/tracking_feeds/:feed_id/ignored', async (ctx) => {
    const id = feedIdParam(ctx.params.feed_id);
    const query = parseOrBadRequest(feedListQuery, { ...queryOnce(ctx.query) });
    const after = query.cursor === undefined ? undefined : decodeUnmatchedCursor(query.cursor);
    if (query.cursor !== undefined && !after) throw badRequest('cursor: not a cursor this API returned; pass next_cursor unchanged');
    const key = checkScope(ctx.state.apiKey, 'events:write');
    if (!(await findFeed(pool, key.issuerId, key.mode, id))) throw feedNotFound(id);
    const page = await pageIgnored(pool, id, { limit: query.limit ?? LIST_LIMIT_DEFAULT, after });
    ctx.body = { data: page.items.map(toIgnoredBody), next_cursor: page.next ? encodeUnmatchedCursor(page.next) : null };
  });
}

export function toIgnoredBody(kept: KeptIgnored) {
  return {
    tracking_number: kept.trackingNumber,
    carrier: kept.carrier,
    dispatch_id: kept.dispatchId,
    status: kept.status,
    substatus: kept.substatus,
    time: kept.originalTime,
    reason: kept.reason,
    message: kept.message,
    received_at: kept.receivedAt.toISOString(),
  };
}

export function toUnmatchedBody(kept: KeptCheckpoint) {
  return {
    tracking_number: kept.trackingNumber,
    carrier: kept.carrier,
    status: kept.status,
    occurred_at: shownCheckpointTime(kept.time as CheckpointTime),
    received_at: kept.receivedAt.toISOString(),
  };
}
