// GET /docs: the API reference page, Redoc rendering GET /v1/openapi.json in the browser. Redoc's
// standalone bundle comes from the `redoc` npm package and is served by this server
// (GET /docs/redoc.standalone.js), so the page loads nothing from anywhere else, and the
// Content-Security-Policy says so: scripts, connections and fonts from 'self' only, images from
// 'self' and data: URLs (the bundle's own icons, inlined in it: no request).
// Redoc's styled-components insert their rules at run time, so style-src also allows
// 'unsafe-inline' (styles only: no inline script runs). Search is off: Redoc builds its search
// index in a worker started from a blob: URL, which the policy refuses. The one remote resource the
// bundle names, the Redocly logo beside "API docs by Redocly" (from Redocly's CDN), is rewritten to
// a small mark served here (test/api/docs.browser.test.ts records every request the page makes).
// Outside /v1 like /metrics: no key, and not counted in any rate-limit window, because the page and
// the bundle are answered from memory (a window costs a Postgres write per request, more than the
// answer). The document the page then fetches, /v1/openapi.json, is counted as before (the client
// IP's window without a key).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import Router from '@koa/router';

export const DOCS_PATH = '/docs';
const BUNDLE_PATH = '/docs/redoc.standalone.js';
const LOGO_PATH = '/docs/redoc-logo.svg';
const REMOTE_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
  '<circle cx="8" cy="8" r="7" fill="#d63939"/></svg>';

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Card Delivery Status Service API reference</title>
  </head>
  <body>
    <redoc spec-url="/v1/openapi.json" disable-search="true" hide-download-button="false"></redoc>
    <script src="${BUNDLE_PATH}"></script>
  </body>
</html>
`;

let bundle: Promise<string> | undefined;

/** Redoc's standalone bundle from node_modules, read once per process, its logo pointed here. */
function redocBundle(): Promise<string> {
  bundle ??= readFile(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'utf8').then(
    (text) => text.replaceAll(REMOTE_LOGO, LOGO_PATH),
    (error: unknown) => {
      bundle = undefined;
      throw error;
    },
  );
  return bundle;
}

export function docsRouter(): Router {
  const router = new Router();
  router.get(DOCS_PATH, (ctx) => {
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get(BUNDLE_PATH, async (ctx) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = await redocBundle();
  });
  router.get(LOGO_PATH, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.type = 'image/svg+xml';
    ctx.body = LOGO;
  });
  return router;
}
