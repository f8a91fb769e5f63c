// The one place where errors become responses: `{ error, message }`, plus `request_id` on 5xx
// (docs/http-contract.md). ApiErrors carry their status and headers; unknown exceptions are logged with
// their stack and answered with 500 internal_error, never with their message. Unmatched routes
// (Koa's default 404, the router's 405/501) are turned into the same shape here.
import type { Context, Middleware } from 'koa';
import type { ErrorBody } from '../../domain/dispatch-schemas.js';
import type { Logger } from '../../platform/logger.js';
import { ApiError, asApiError, notFound } from '../errors.js';

export function renderErrors(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null && ctx.status === 404) throw notFound(`no route for ${ctx.method} ${ctx.path}`);
      if (ctx.body == null && (ctx.status === 405 || ctx.status === 501)) {
        throw new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`, {
          Allow: ctx.response.get('Allow'),
        });
      }
    } catch (error) {
      render(ctx, toApiError(error, ctx, logger));
    }
  };
}

function toApiError(error: unknown, ctx: Context, logger: Logger): ApiError {
  const known = asApiError(error);
  if (known) return known;
  logger.error({ err: error, request_id: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
  return new ApiError(500, 'internal_error', 'unexpected server error; retry with exponential backoff');
}

function render(ctx: Context, error: ApiError): void {
  const body: ErrorBody = { error: error.code, message: error.message };
  if (error.status >= 500) body.request_id = ctx.state.requestId;
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) if (value) ctx.set(name, value);
  ctx.body = body;
}
