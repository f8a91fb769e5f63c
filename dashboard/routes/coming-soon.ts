// Placeholders for the pages the nav already links to. A page that gets built removes its entry
// here and registers its own routes (see README "Dashboard" → adding a page).
import type Router from '@koa/router';
import type { DashboardDeps } from '../deps.js';
import { renderPage } from '../render.js';

const PLANNED = [
  { path: '/webhooks', title: 'Webhooks', description: 'Your webhook endpoints, their events and health, and their signing secrets.' },
  { path: '/deliveries', title: 'Delivery log', description: 'Every webhook delivery attempt, with replay.' },
];

export function comingSoonRoutes(router: Router, _deps: DashboardDeps): void {
  for (const page of PLANNED) {
    router.get(page.path, (ctx) => renderPage(ctx, 'coming-soon', { title: page.title, description: page.description }));
  }
}
