// Tenancy: every signed-in dashboard handler works for exactly one issuer, the signed-in user's.
// `tenantRoute` hands the handler that issuer (and nothing else to scope by), and `ownedOr404`
// turns a lookup that found nothing *for this issuer* into the same 404 page as an unknown id, so
// another issuer's ids are indistinguishable from ids that do not exist.
//
//   router.get('/things/:id', tenantRoute(async (ctx, tenant) => {
//     const thing = ownedOr404(await findThing(pool, tenant.issuerId, ctx.params.id));
//     …
//   }));
import type { RouterContext } from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { pageNotFound, PageError } from './errors.js';

export interface Tenant {
  issuerId: string;
  issuerName: string;
  userId: string;
  email: string;
}

export type DashboardContext = RouterContext;

export function tenantOf(ctx: ParameterizedContext): Tenant {
  const session = ctx.state.session;
  // Unreachable behind requireSignIn; a route registered outside it must not silently see no tenant.
  if (!session) throw new PageError(401, 'Sign in', 'Sign in to see this page.');
  return { issuerId: session.issuerId, issuerName: session.issuerName, userId: session.userId, email: session.email };
}

export function tenantRoute(handler: (ctx: DashboardContext, tenant: Tenant) => Promise<void>) {
  return (ctx: DashboardContext) => handler(ctx, tenantOf(ctx));
}

export function ownedOr404<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw pageNotFound();
  return value;
}
