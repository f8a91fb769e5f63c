// GET /v1/status/{id}: the spec's status record, straight from the projection, sent as the stored
// JSON text. Successful plain reads are answered before Koa by api/fast-status.ts; this route
// answers the rest (every error, and `?locale=`, which re-renders only `ui_suggestion`).
import type Router from '@koa/router';
import { z } from 'zod';
import { findDispatch, findDispatchRecord, type DispatchRow } from '../../db/dispatches.js';
import type { Pool } from '../../db/pool.js';
import { renderSuggestion } from '../../domain/messages.js';
import { localeTag } from '../../domain/schemas.js';
import { badRequest, describeZodError } from '../errors.js';
import { requireScope } from '../middleware/auth.js';
import { checkAccess, dispatchIdParam } from './access.js';

export const statusQuery = z.object({ locale: localeTag.optional() });

export function statusRoutes(router: Router, pool: Pool): void {
  router.get('/v1/status/:id', requireScope('status:read'), async (ctx) => {
    const key = ctx.state.apiKey!;
    const id = dispatchIdParam(ctx.params.id);
    const locale = parseLocale(ctx.query.locale);
    ctx.type = 'application/json';
    if (locale === undefined) {
      ctx.body = checkAccess(key, id, await findDispatchRecord(pool, id)).recordJson;
    } else {
      ctx.body = withLocale(checkAccess(key, id, await findDispatch(pool, id)), locale);
    }
  });
}

function parseLocale(value: string | string[] | undefined): string | undefined {
  // Other query parameters are ignored: the spec says additional ones exist.
  if (value === undefined) return undefined;
  const parsed = statusQuery.safeParse({ locale: value });
  if (!parsed.success) throw badRequest(describeZodError(parsed.error));
  return parsed.data.locale;
}

function withLocale(row: DispatchRow, locale: string): string {
  const record = JSON.parse(row.recordJson);
  record.ui_suggestion = renderSuggestion({
    status: row.status,
    window: { min: row.windowMin, max: row.windowMax },
    confidence: row.confidenceLevel,
    exceptionReason: row.exceptionReason ?? undefined,
    requestedLocale: locale,
    registeredLocale: row.locale ?? undefined,
    countryCode: row.countryCode,
  });
  return JSON.stringify(record);
}
