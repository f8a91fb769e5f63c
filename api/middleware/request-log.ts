// One log line per request, with its id, status and duration. Only the method and path are logged:
// never the Authorization header or a key (keys travel only in that header).
import type { Middleware } from 'koa';
import type { Logger } from '../../platform/logger.js';

export function requestLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const fields = {
        request_id: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        key_id: ctx.state.apiKey?.id,
      };
      if (ctx.status >= 500) logger.error(fields, 'request failed');
      else logger.info(fields, 'request');
    }
  };
}
