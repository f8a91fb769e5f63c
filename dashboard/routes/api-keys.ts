// Settings → API keys: the signed-in issuer's keys (prefix, mode, scopes, created, last used; never
// the secret), creating one (shown once, on the response page only) and revoking one. The queries
// are the operator CLI's (db/issuers.ts), always scoped by the tenant's issuer id.
import type Router from '@koa/router';
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../../db/issuers.js';
import { SCOPES } from '../../domain/api-keys.js';
import type { DashboardDeps } from '../deps.js';
import { FIELD_ERRORS, formError } from '../form-errors.js';
import { renderPage } from '../render.js';
import { submitOnce, takeReveal } from '../submit-once.js';
import { ownedOr404, tenantRoute, type DashboardContext, type Tenant } from '../tenancy.js';

const createForm = z.object({
  // A single checked box arrives as a string, several as an array.
  scopes: z
    .union([z.enum(SCOPES), z.array(z.enum(SCOPES))], 'Choose scopes from the list.')
    .optional()
    .transform((value) => [...new Set(value === undefined ? [] : [value].flat())])
    .refine((scopes) => scopes.length > 0, 'Choose at least one scope.'),
  mode: z.enum(['live', 'test'], 'Choose live or test mode.'),
});

export function apiKeyRoutes(router: Router, { pool }: DashboardDeps): void {
  const listPage = async (ctx: DashboardContext, tenant: Tenant, extra: { error?: string; revokedId?: string } = {}, status = 200) => {
    const keys = ownedOr404(await listApiKeys(pool, tenant.issuerId));
    const revoked = keys.find((key) => key.id === extra.revokedId && key.revokedAt);
    renderPage(ctx, 'api-keys', { title: 'API keys', keys, scopes: SCOPES, revoked, error: extra.error }, status);
  };

  router.get(
    '/api-keys',
    tenantRoute(async (ctx, tenant) => {
      const reveal = await takeReveal(ctx, pool);
      if (reveal) return renderPage(ctx, 'api-key-created', { title: 'API key created', key: reveal.key });
      return listPage(ctx, tenant, { revokedId: typeof ctx.query.revoked === 'string' ? ctx.query.revoked : undefined });
    }),
  );

  router.post(
    '/api-keys',
    tenantRoute(async (ctx, tenant) => {
      const form = createForm.safeParse(ctx.request.body ?? {}, FIELD_ERRORS);
      if (!form.success) return listPage(ctx, tenant, { error: formError(form.error) }, 400);
      // Once per form sent (a double click makes one key), shown once on the page it leads to (submit-once.ts).
      return submitOnce(ctx, pool, async () => {
        const key = ownedOr404(await createApiKey(pool, { issuerId: tenant.issuerId, scopes: form.data.scopes, mode: form.data.mode }));
        return { path: '/dashboard/api-keys', reveal: { key: { key: key.key, mode: key.mode, scopes: key.scopes } } };
      });
    }),
  );

  router.get(
    '/api-keys/:id/revoke',
    tenantRoute(async (ctx, tenant) => {
      const key = ownedOr404((await listApiKeys(pool, tenant.issuerId))?.find((k) => k.id === ctx.params.id && !k.revokedAt));
      renderPage(ctx, 'api-key-revoke', { title: 'Revoke API key', key });
    }),
  );

  router.post(
    '/api-keys/:id/revoke',
    tenantRoute(async (ctx, tenant) => {
      const revoked = ownedOr404(await revokeApiKey(pool, ctx.params.id, { issuerId: tenant.issuerId }));
      ctx.status = 303;
      ctx.redirect(`/dashboard/api-keys?revoked=${encodeURIComponent(revoked.id)}`);
    }),
  );
}
