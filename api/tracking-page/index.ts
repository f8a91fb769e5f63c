// The cardholder's tracking page, GET and POST /t/{token} (docs/tracking-page.md "Tracking
// links and the tracking page"): no API key, the link's token is the credential. Mounted by api/app.ts before
// API-key auth, it answers every path under /t/ itself, in this order:
//   1. the stylesheet (not counted);
//   2. the per-client-IP limit, TRACKING_PAGE_RATE_PER_MINUTE (api/rate-limiter.ts, shared by every
//      API process) → 429 page;
//   3. the token: a malformed or unknown one → 404 page naming no issuer; a link of an erased dispatch
//      → 404 page saying its tracking was erased, naming no issuer; revoked or expired → 410 page in
//      the link's language with the issuer's support contact;
//   4. the postal-code gate (require_postal_code): the form until a right code set the pass cookie;
//      five wrong codes within 15 minutes → 429 page for every further attempt (db/tracking-links.ts);
//   5. the page, rendered afresh from the projection and the carrier events on every request.
// Every answer carries the headers of `pageHeaders` and counts in cds_tracking_page_views_total.
// The token never reaches a log line, a span (platform/request-path.ts) or a metric label.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import compose from 'koa-compose';
import { createHash } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import {
  attemptGate,
  createGatePass,
  findPageByToken,
  gatePassValid,
  isErasedLinkToken,
  type PageRecord,
} from '../../db/tracking-links.js';
import { CATALOGS } from '../../domain/locales/index.js';
import { TOKEN_PATTERN, tokenMatches } from '../../domain/tracking-links.js';
import {
  issuerDisplayName,
  languageLinks,
  pageLanguage,
  pageView,
  postalCodeMatches,
  supportAction,
  type PageLanguage,
} from '../../domain/tracking-page.js';
import { publicBaseUrl, type Config } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { trackingPageViews, type TrackingPageOutcome } from '../../platform/metrics.js';
import { noneMatchNames } from '../status-read.js';
import type { RateLimiter } from '../rate-limiter.js';
import { renderEnd, renderGate, renderPage, type EndKind, type Rendered } from './render.js';
import { STYLESHEET, STYLESHEET_PATH } from './stylesheet.js';

export const TRACKING_PAGE_PREFIX = '/t';
const PASS_COOKIE = 'cds_tracking_pass';
/** The browser may keep the page this long; the service renders it afresh for every request it gets. */
const PAGE_MAX_AGE_SECONDS = 60;

export interface TrackingPageDeps {
  pool: Pool;
  config: Config;
  logger: Logger;
  /** Counts page requests per client IP (TRACKING_PAGE_RATE_PER_MINUTE). */
  limiter: RateLimiter;
}

type Ctx = ParameterizedContext;

/** The headers of every page answer (docs/tracking-page.md "The page"); `styleHash` allows the accent colour's inline style. */
function pageHeaders(ctx: Ctx, styleHash: string | undefined, secure: boolean): void {
  const styleSrc = ["'self'", styleHash].filter(Boolean).join(' ');
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src ${styleSrc}; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Vary', 'Accept-Language, Cookie');
  if (secure) ctx.set('Strict-Transport-Security', 'max-age=31536000');
}

function send(ctx: Ctx, status: number, rendered: Rendered, language: PageLanguage, secure: boolean, outcome?: TrackingPageOutcome): void {
  pageHeaders(ctx, rendered.styleHash, secure);
  ctx.set('Content-Language', language.locale);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = rendered.body;
  if (outcome) trackingPageViews.inc({ outcome });
}

const queryLang = (ctx: Ctx) => (typeof ctx.query.lang === 'string' ? ctx.query.lang : undefined);

function languageOf(ctx: Ctx, linkLocale?: string | null): PageLanguage {
  return pageLanguage({ lang: queryLang(ctx), linkLocale, acceptLanguage: ctx.get('accept-language') || undefined });
}

function end(ctx: Ctx, kind: EndKind, secure: boolean, record?: PageRecord): void {
  const language = languageOf(ctx, record?.linkLocale);
  const strings = CATALOGS[language.language].page;
  const issuer = record && { name: record.issuerName, branding: record.branding };
  const rendered = renderEnd({
    kind,
    language,
    strings,
    languages: languageLinks(language.language),
    // Only a 410 names the issuer: the link was real, and the cardholder needs whom to ask.
    issuerName: kind === 'gone' && issuer ? issuerDisplayName(issuer) : undefined,
    accentColor: kind === 'gone' ? record?.branding?.accent_color : undefined,
    support: kind === 'gone' && issuer ? supportAction(issuer, strings, language.locale) : undefined,
  });
  const status = { not_found: 404, erased: 404, gone: 410, limited: 429, error: 500 }[kind];
  // The metric's outcomes are DESIGN §9's: an erased dispatch's link is a not_found there, its page its own.
  send(ctx, status, rendered, language, secure, kind === 'error' ? undefined : kind === 'erased' ? 'not_found' : kind);
}

/** The path the page posts to and redirects to: the token's own, with the chosen `?lang=`. */
function selfPath(token: string, ctx: Ctx): string {
  const lang = queryLang(ctx);
  return `${TRACKING_PAGE_PREFIX}/${token}${lang ? `?lang=${encodeURIComponent(lang)}` : ''}`;
}

export function trackingPage(deps: TrackingPageDeps): Middleware {
  const { pool, logger, limiter } = deps;
  const secure = new URL(publicBaseUrl(deps.config)).protocol === 'https:';
  const cookieName = secure ? `__Secure-${PASS_COOKIE}` : PASS_COOKIE;
  const router = new Router({ prefix: TRACKING_PAGE_PREFIX });

  /** The link of a request, or undefined once an end page (404/410) was sent. */
  const linkOf = async (ctx: Ctx): Promise<PageRecord | undefined> => {
    const token: string = ctx.params.token;
    const wellFormed = TOKEN_PATTERN.test(token);
    const record = wellFormed ? await findPageByToken(pool, token) : undefined;
    if (!record || !tokenMatches(record.tokenHash, token)) {
      return void end(ctx, wellFormed && (await isErasedLinkToken(pool, token)) ? 'erased' : 'not_found', secure);
    }
    if (record.revoked || record.expiresAt.getTime() <= Date.now()) return void end(ctx, 'gone', secure, record);
    return record;
  };

  const passed = async (ctx: Ctx, record: PageRecord) => {
    const pass = ctx.cookies.get(cookieName);
    return pass !== undefined && pass.length <= 64 && (await gatePassValid(pool, record.linkId, pass));
  };

  const gate = (ctx: Ctx, record: PageRecord, wrong: boolean) => {
    const language = languageOf(ctx, record.linkLocale);
    const issuer = { name: record.issuerName, branding: record.branding };
    const rendered = renderGate({
      language,
      strings: CATALOGS[language.language].page,
      issuerName: issuerDisplayName(issuer),
      accentColor: record.branding?.accent_color ?? null,
      languages: languageLinks(language.language),
      action: selfPath(ctx.params.token, ctx),
      wrong,
    });
    send(ctx, 200, rendered, language, secure, 'gate');
  };

  router.get('/:token', async (ctx) => {
    const record = await linkOf(ctx);
    if (!record) return;
    if (record.requirePostalCode && !(await passed(ctx, record))) return gate(ctx, record, false);
    const language = languageOf(ctx, record.linkLocale);
    const view = pageView(record, { name: record.issuerName, branding: record.branding }, language);
    const rendered = renderPage(view);
    pageHeaders(ctx, rendered.styleHash, secure);
    const tag = `"${createHash('sha256').update(rendered.body).digest('base64url').slice(0, 27)}"`;
    ctx.set('ETag', tag);
    ctx.set('Cache-Control', `private, max-age=${PAGE_MAX_AGE_SECONDS}`);
    ctx.set('Content-Language', language.locale);
    trackingPageViews.inc({ outcome: 'ok' });
    const ifNoneMatch = ctx.get('if-none-match');
    if (ifNoneMatch && noneMatchNames(ifNoneMatch, tag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = rendered.body;
  });

  const formBody = bodyParser({
    enableTypes: ['form'],
    formLimit: '2kb',
    onError: () => {
      // An unreadable form is a wrong code: it counts like one below.
    },
  });

  router.post('/:token', formBody, async (ctx) => {
    const record = await linkOf(ctx);
    if (!record) return;
    if (!record.requirePostalCode) {
      ctx.status = 303;
      return ctx.redirect(selfPath(ctx.params.token, ctx));
    }
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const typed = typeof body.postal_code === 'string' ? body.postal_code.slice(0, 32) : '';
    const outcome = await attemptGate(pool, record.linkId, () => typed !== '' && postalCodeMatches(typed, record.postalCode, record.countryCode)); // prettier-ignore
    if (outcome === 'limited') return end(ctx, 'limited', secure, record);
    if (outcome === 'wrong') return gate(ctx, record, true);
    const pass = await createGatePass(pool, record.linkId, record.expiresAt);
    // Behind a TLS-terminating proxy the request itself is http: PUBLIC_BASE_URL says what browsers see.
    if (secure) ctx.cookies.secure = true;
    ctx.cookies.set(cookieName, pass, {
      path: `${TRACKING_PAGE_PREFIX}/${ctx.params.token}`,
      httpOnly: true,
      sameSite: 'strict',
      secure,
      expires: record.expiresAt,
      overwrite: true,
    });
    pageHeaders(ctx, undefined, secure);
    ctx.set('Cache-Control', 'no-store');
    trackingPageViews.inc({ outcome: 'gate' });
    ctx.status = 303;
    ctx.redirect(selfPath(ctx.params.token, ctx));
  });

  const stylesheet: Middleware = async (ctx, next) => {
    if (ctx.path !== STYLESHEET_PATH) return next();
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = STYLESHEET;
  };

  const rateLimit: Middleware = async (ctx, next) => {
    const admission = await limiter.take(`page:${ctx.ip}`);
    if (!admission.admitted) {
      ctx.set('Retry-After', String(Math.max(1, admission.resetAt - Math.floor(Date.now() / 1000))));
      return end(ctx, 'limited', secure);
    }
    await next();
  };

  const errors: Middleware = async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null && ctx.status === 404) end(ctx, 'not_found', secure); // no route: /t/, /t/a/b, another method
    } catch (error) {
      logger.error({ err: error, request_id: ctx.state.requestId, path: `${TRACKING_PAGE_PREFIX}/…` }, 'tracking page failed');
      end(ctx, 'error', secure);
    }
  };

  const chain = compose<Ctx>([errors, stylesheet, rateLimit, router.routes() as Middleware]);
  return (ctx, next) =>
    ctx.path === TRACKING_PAGE_PREFIX || ctx.path.startsWith(`${TRACKING_PAGE_PREFIX}/`) ? chain(ctx, async () => {}) : next();
}
