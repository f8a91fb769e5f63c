// Gives every request an id, echoed in `X-Request-Id` on every response and in every log line of
// the request. A caller's own id is kept when it is sane, so ids can be followed across systems.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's id when it is sane, else a new one. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
}

export function requestId(): Middleware {
  return async (ctx, next) => {
    const id = requestIdFor(ctx.req.headers['x-request-id']);
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
