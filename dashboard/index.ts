// The issuer dashboard: server-rendered HTML under /dashboard, served by the API's Koa app (mounted
// by api/server.ts before API-key auth, which it does not use). Its own chain, in order: security
// headers → HTML error pages → stylesheet → form body → session → CSRF check → public pages
// (sign-in, set-password) → sign-in required → the issuer's pages (each scoped by tenancy.ts).
// A new page: a module under routes/ registered in PAGES below, a view under views/, a NAV entry.
import { readFileSync } from 'node:fs';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import helmet from 'helmet';
import type { Middleware, ParameterizedContext } from 'koa';
import compose from 'koa-compose';
import { z } from 'zod';
import { dashboardBaseUrl } from '../platform/config.js';
import type { DashboardDeps } from './deps.js';
import { formError } from './form-errors.js';
import { pageNotFound, PageError } from './errors.js';
import { DASHBOARD_PREFIX, HOME } from './nav.js';
import { renderPage } from './render.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { deliveryLogRoutes } from './routes/delivery-log.js';
import { dispatchRoutes } from './routes/dispatches.js';
import { predictionQualityRoutes } from './routes/prediction-quality.js';
import { signInRoutes } from './routes/sign-in.js';
import { trackingFeedRoutes } from './routes/tracking-feeds.js';
import { trackingPageRoutes } from './routes/tracking-page.js';
import { webhookActionRoutes } from './routes/webhook-actions.js';
import { webhookRoutes } from './routes/webhooks.js';
import { csrfProtection, loadSession } from './session.js';

/** The signed-in pages, each a function that registers its routes on the dashboard router. */
const PAGES: Array<(router: Router, deps: DashboardDeps) => void> = [
  webhookRoutes,
  webhookActionRoutes,
  deliveryLogRoutes,
  apiKeyRoutes,
  dispatchRoutes,
  predictionQualityRoutes,
  trackingPageRoutes,
  trackingFeedRoutes,
];

const STYLESHEET_PATH = `${DASHBOARD_PREFIX}/assets/dashboard.css`;
const STYLESHEET = readFileSync(new URL('./assets/dashboard.css', import.meta.url));

/** What the process hands the dashboard: the same services as the API's. */
export type DashboardServices = Pick<DashboardDeps, 'config' | 'pool' | 'logger' | 'temporal'>;

export function dashboard(app: DashboardServices): Middleware {
  const secure = new URL(dashboardBaseUrl(app.config)).protocol === 'https:';
  const deps: DashboardDeps = {
    ...app,
    cookies: { secure },
    sessionLifetime: { idleMs: app.config.DASHBOARD_SESSION_IDLE, maxMs: app.config.DASHBOARD_SESSION_MAX },
  };
  const publicPages = new Router({ prefix: DASHBOARD_PREFIX });
  signInRoutes(publicPages, deps);
  const pages = new Router({ prefix: DASHBOARD_PREFIX });
  for (const register of PAGES) register(pages, deps);

  const chain = compose<ParameterizedContext>([
    securityHeaders(secure),
    pageErrors(deps),
    stylesheet(),
    formBody(),
    loadSession(deps.pool, deps.cookies, deps.sessionLifetime),
    csrfProtection(deps.cookies),
    publicPages.routes() as Middleware,
    requireSignIn(),
    pages.routes() as Middleware,
    pages.allowedMethods() as Middleware,
  ]);
  return (ctx, next) => (ctx.path === DASHBOARD_PREFIX || ctx.path.startsWith(`${DASHBOARD_PREFIX}/`) ? chain(ctx) : next());
}

function securityHeaders(secure: boolean): Middleware {
  const headers = helmet({
    // No script at all: the pages are plain HTML forms.
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' }, // set-password links carry their token in the URL
    strictTransportSecurity: secure ? { maxAge: 31_536_000 } : false,
  });
  return async (ctx, next) => {
    await new Promise<void>((resolve, reject) => headers(ctx.req, ctx.res, (error?: unknown) => (error ? reject(error) : resolve())));
    // Pages hold CSRF tokens and, once, a new API key: never cached.
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}

function pageErrors({ logger }: DashboardDeps): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null)
        throw ctx.status === 405 ? new PageError(405, 'Not allowed', `${ctx.method} is not allowed here.`) : pageNotFound();
    } catch (error) {
      if (error instanceof PageError) return renderPage(ctx, 'error', { title: error.title, message: error.message }, error.status);
      if (error instanceof z.ZodError) return renderPage(ctx, 'error', { title: 'Invalid form', message: formError(error) }, 400);
      logger.error({ err: error, request_id: ctx.state.requestId, path: ctx.path }, 'dashboard page failed');
      renderPage(ctx, 'error', { title: 'Something went wrong', message: 'Try again in a moment.', requestId: ctx.state.requestId }, 500);
    }
  };
}

function stylesheet(): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== STYLESHEET_PATH) return next();
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'max-age=300');
    ctx.body = STYLESHEET;
  };
}

function formBody(): Middleware {
  return bodyParser({
    enableTypes: ['form'],
    formLimit: '16kb',
    onError: () => {
      throw new PageError(400, 'Invalid form', 'The form could not be read.');
    },
  });
}

function requireSignIn(): Middleware {
  return async (ctx, next) => {
    if (!ctx.state.session) {
      ctx.status = 303;
      return ctx.redirect(`${DASHBOARD_PREFIX}/sign-in`);
    }
    if (ctx.path === DASHBOARD_PREFIX || ctx.path === `${DASHBOARD_PREFIX}/`) return ctx.redirect(HOME);
    await next();
  };
}
