// POST /v1/inbound/{feed_id}: a tracking aggregator's webhook, as it sends it (docs/tracking-feeds.md
// "Inbound", DESIGN §10). No API key: mounted before the key check (api/app.ts). In this order:
// 404 unknown or revoked feed → 429 when the feed's window is known to be full (before its body is
// read) → 413 over 2 MiB → 401 unless the provider's module authenticates the raw bytes (in constant
// time, before any parsing; counted, nothing stored), or 429 past FEED_RATE_PER_MINUTE such requests
// → 429 past FEED_RATE_PER_MINUTE signed requests for the feed (Retry-After; providers retry) → 400
// unless the body is the provider's shape (naming the field; one tracking of a Ship24 group that is
// not is only logged, by field, and its checkpoints ignored as `malformed`) → every checkpoint through
// ingest/tracking-feeds.ts → 200
// `{ received, applied, duplicate, unmatched, ignored }` only once each is durable (anything else
// makes the provider retry, and a retry is answered the same). HEAD → 200 (Ship24 checks the URL).
// Unsigned requests count in a window of their own per feed: whoever learns a feed's URL cannot use
// up the provider's allowance with them (nor can a feed whose secret is out of date stop another's
// requests, as a window per client IP would: a provider sends every customer's from the same few).
// Never logged: the body, the secret, the token (the request log shows the path only).
import Router from '@koa/router';
import type { Context } from 'koa';
import type { InboundFeed } from '../../db/tracking-feeds.js';
import { feedId } from '../../domain/tracking-feed-schemas.js';
import { FEED_PROVIDER_MODULES } from '../../domain/tracking-feeds/index.js';
import type { FeedProvider } from '../../domain/tracking-feeds/provider.js';
import type { FeedIngest } from '../../ingest/tracking-feeds.js';
import type { Logger } from '../../platform/logger.js';
import { feedCheckpoints, feedRequests, type FeedRequestOutcome } from '../../platform/metrics.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import type { FeedCache } from '../feed-cache.js';
import type { FeedCounter } from '../feed-counts.js';
import { rateLimitExceeded, rateLimitHeaders, rateLimitSubject } from '../middleware/rate-limit.js';
import type { Admission, RateLimiter } from '../rate-limiter.js';

/** The largest body taken (DESIGN §10): a long history of many trackings fits well within it. */
export const INBOUND_BODY_LIMIT = 2 * 1024 * 1024;

export interface InboundDeps {
  feeds: FeedCache;
  feedIngest: FeedIngest;
  counter: FeedCounter;
  /** Per feed, FEED_RATE_PER_MINUTE. */
  limiter: RateLimiter;
  /** Per client IP (RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE): answers that name no feed (an unknown one, a 405). */
  ipLimiter: RateLimiter;
  logger: Pick<Logger, 'warn'>;
}

export function inboundRouter(deps: InboundDeps): Router {
  const router = new Router();

  router.head('/v1/inbound/:feed_id', async (ctx) => {
    const feed = await liveFeed(ctx, ctx.params.feed_id);
    admit(ctx, await deps.limiter.take(unsignedWindow(feed)), 'unsigned requests this minute for this feed');
    ctx.status = 200;
  });

  router.post('/v1/inbound/:feed_id', async (ctx) => {
    const feed = await liveFeed(ctx, ctx.params.feed_id);
    const provider = feed.provider as FeedProvider;
    const outcome = (value: FeedRequestOutcome) => feedRequests.inc({ provider, outcome: value });
    const admitTo = (admission: Admission, what: string) => {
      if (!admission.admitted) outcome('limited');
      admit(ctx, admission, `${what} this minute for this feed`);
    };
    const signedWindow = `feed:${feed.id}`;
    const known = deps.limiter.knownFull(signedWindow);
    if (known) admitTo(known, 'requests');
    const rawBody = await readRawBody(ctx).catch(async (error: unknown) => {
      // Too large: never read, so never authenticated; counted as unsigned (its window's headers on the 413).
      if (error instanceof ApiError && error.status === 413) admitTo(await deps.limiter.take(unsignedWindow(feed)), 'unsigned requests');
      outcome('bad_body');
      throw error;
    });
    const module = FEED_PROVIDER_MODULES[provider];
    if (!module.authenticate({ rawBody, headers: ctx.req.headers, query: ctx.query }, feed.secret)) {
      admitTo(await deps.limiter.take(unsignedWindow(feed)), 'unsigned requests');
      outcome('unauthorized');
      deps.counter.add(feed.id, { unauthorized: 1 }, false);
      throw new ApiError(401, 'unauthorized', `the request is not signed with this feed's ${provider} secret (or token)`);
    }
    admitTo(await deps.limiter.take(signedWindow), 'requests');
    // Authenticated: `last_received_at` says so whatever becomes of the body (docs/tracking-feeds.md).
    deps.counter.add(feed.id, {}, true);
    const parsed = module.parse(parseJson(rawBody, outcome));
    if (!parsed.ok) {
      outcome('bad_body');
      throw badRequest(parsed.message); // already `field: problem` (domain/tracking-feeds/common.ts failure)
    }
    // A tracking not in the provider's shape inside a body that is: its checkpoints are ignored (listed
    // as `malformed`); the operator's log names the field, never the body.
    for (const tracking of parsed.trackings) {
      if (tracking.malformed)
        deps.logger.warn({ feed_id: feed.id, provider, field: tracking.malformed.field }, 'inbound tracking not in the provider shape: its checkpoints ignored (malformed)'); // prettier-ignore
    }
    const receipt = await deps.feedIngest.receive(feed, parsed.trackings);
    deps.counter.add(feed.id, receipt, true);
    for (const result of ['applied', 'duplicate', 'unmatched', 'ignored'] as const) {
      if (receipt[result] > 0) feedCheckpoints.inc({ provider, result }, receipt[result]);
    }
    outcome('ok');
    ctx.body = receipt;
  });

  // Any other method: 405 here, since the API key check after this router would answer a keyless
  // GET (an issuer opening the URL in a browser) with an API key's 401.
  router.all('/v1/inbound/:feed_id', async (ctx) => {
    await admitClient(ctx);
    throw new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed on /v1/inbound/{feed_id}: providers POST`, {
      Allow: 'HEAD, POST',
    });
  });

  return router;

  /**
   * The client IP's window (RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE), for an answer that names no live
   * feed; kept as the request's admission, so that its 429 counts as a refusal of kind `ip`
   * (api/middleware/metrics.ts), as the key check's does.
   */
  async function admitClient(ctx: Context): Promise<void> {
    const admission = await deps.ipLimiter.take(rateLimitSubject(undefined, ctx.ip));
    ctx.state.admission = admission;
    admit(ctx, admission, 'requests this minute from this client');
  }

  async function liveFeed(ctx: Context, id: string): Promise<InboundFeed> {
    const feed = feedId.safeParse(id).success ? await deps.feeds.find(id) : undefined;
    if (!feed) {
      // No feed's window to show: the client IP's, as for any /v1 request without a valid key (429 first, as there).
      await admitClient(ctx).catch((error: unknown) => {
        feedRequests.inc({ provider: 'unknown', outcome: 'limited' });
        throw error;
      });
      feedRequests.inc({ provider: 'unknown', outcome: 'not_found' });
      throw notFound(`no tracking feed ${id.slice(0, 40)} (unknown or revoked)`);
    }
    return feed;
  }
}

/** Unsigned requests (and those never read: HEAD, a 413) count in a window of their own per feed. */
const unsignedWindow = (feed: InboundFeed) => `feed-unsigned:${feed.id}`;

/**
 * Sets the window's X-RateLimit-* headers on the answer, errors included, as every /v1 response
 * carries its window's (docs/http-contract.md "Common rules"); 429 with Retry-After when it refused.
 */
function admit(ctx: Context, admission: Admission, what: string): void {
  ctx.set(rateLimitHeaders({}, admission) as Record<string, string>);
  if (!admission.admitted) throw rateLimitExceeded(admission, what);
}

function parseJson(rawBody: Buffer, outcome: (value: FeedRequestOutcome) => void): unknown {
  try {
    return JSON.parse(rawBody.toString('utf8'));
  } catch {
    outcome('bad_body');
    throw badRequest('body: not valid JSON');
  }
}

/** The body's bytes as sent (the signature is over them), at most INBOUND_BODY_LIMIT: 413 beyond. */
async function readRawBody(ctx: Context): Promise<Buffer> {
  const tooLarge = () => new ApiError(413, 'payload_too_large', `the request body exceeds ${INBOUND_BODY_LIMIT} bytes (2 MiB)`);
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > INBOUND_BODY_LIMIT) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > INBOUND_BODY_LIMIT) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
