// One log line per request, with its id, status and duration. Only the method and path are logged:
// never the Authorization header or a key (keys travel only in that header), and never a tracking
// page's token (platform/request-path.ts).
import type { Middleware } from 'koa';
import type { Logger } from '../../platform/logger.js';
import { loggablePath } from '../../platform/request-path.js';

export interface RequestLogFields {
  requestId: string;
  method: string;
  path: string;
  status: number;
  /** performance.now() when the request arrived. */
  started: number;
  keyId?: string;
}

/** The request's log line; also written by the fast path (api/fast-status.ts). */
export function logRequest(logger: Logger, fields: RequestLogFields): void {
  const line = {
    request_id: fields.requestId,
    method: fields.method,
    path: loggablePath(fields.path),
    status: fields.status,
    ms: Math.round((performance.now() - fields.started) * 10) / 10,
    key_id: fields.keyId,
  };
  if (fields.status >= 500) logger.error(line, 'request failed');
  else logger.info(line, 'request');
}

export function requestLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logRequest(logger, {
        requestId: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        started,
        keyId: ctx.state.apiKey?.id,
      });
    }
  };
}
