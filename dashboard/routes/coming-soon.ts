// Placeholders for the pages the nav already links to. A page that gets built removes its entry
// here and registers its own routes (see README "Dashboard" → adding a page).
import type Router from '@koa/router';
import type { DashboardDeps } from '../deps.js';
import { renderPage } from '../render.js';

const PLANNED = [
  { path: '/dispatches', title: 'Dispatches', description: 'Search your dispatches and open their status, events and predictions.' },
];

export function comingSoonRoutes(router: Router, _deps: DashboardDeps): void {
  for (const page of PLANNED) {
    router.get(page.path, (ctx) => renderPage(ctx, 'coming-soon', { title: page.title, description: page.description }));
  }
}
