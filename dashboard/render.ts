// Renders dashboard pages: Eta templates from dashboard/views (auto-escaped: `<%= %>` always
// escapes; the raw `<%~ %>` is used only to place the rendered page body in the layout, and the
// chart HTML of dashboard/charts.ts, which escapes every text itself). Every page
// gets the layout's data: the signed-in tenant (for the header and nav), the CSRF token for its
// forms, and a few formatting helpers.
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { ParameterizedContext } from 'koa';
import { NAV } from './nav.js';
import { newFormNonce } from './submit-once.js';

const eta = new Eta({
  views: fileURLToPath(new URL('./views', import.meta.url)),
  autoEscape: true,
  cache: true,
});

const helpers = {
  /** A UTC timestamp to the minute, or an em dash for "never". */
  time(date: Date | null | undefined): string {
    return date ? `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '—';
  },
};

export interface PageData {
  /** The page's <title> and <h1>. */
  title: string;
  [field: string]: unknown;
}

/** Renders `views/<view>.eta` (which names its layout) as the response, with `status`. */
export function renderPage(ctx: ParameterizedContext, view: string, data: PageData, status = 200): void {
  const session = ctx.state.session;
  const html = eta.render(view, {
    ...data,
    ...helpers,
    csrfToken: ctx.state.csrfToken,
    // The `_once` value of the page's creating forms (submit-once.ts).
    formNonce: newFormNonce(),
    tenant: session && { issuerName: session.issuerName, email: session.email },
    nav: NAV.map((item) => ({ ...item, current: ctx.path === item.href || ctx.path.startsWith(`${item.href}/`) })),
  });
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}
