// Reads a JSON request body for the routes that take one: 415 unless the body is declared
// application/json in UTF-8 (no charset, or utf-8), 413 past the size limit, 400 for anything that
// is not a JSON object or array, or that holds a `__proto__` key. The zod schema of each route then validates the shape.
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { ApiError, badRequest } from '../errors.js';

export const BODY_LIMIT = '1mb';

export function jsonBody(limit = BODY_LIMIT): Middleware {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: limit,
    onError: (error) => {
      const status = (error as { status?: number }).status;
      if (status === 413) throw new ApiError(413, 'payload_too_large', `the request body exceeds ${limit}`);
      if (status === 415) throw new ApiError(415, 'unsupported_media_type', 'the body encoding is not supported; send UTF-8 JSON');
      // Valid JSON with a `__proto__` key, refused by the parser (@hapi/bourne) against prototype poisoning.
      if (/forbidden prototype property/.test((error as Error).message))
        throw badRequest('the request body holds a key named "__proto__", which is not accepted');
      throw badRequest('the request body is not valid JSON (an object is expected)');
    },
  });
  return async (ctx, next) => {
    if (!ctx.is('application/json')) {
      throw new ApiError(415, 'unsupported_media_type', 'send the body as JSON with "Content-Type: application/json"');
    }
    const charset = ctx.request.charset.toLowerCase();
    // JSON between systems is UTF-8 (RFC 8259 §8.1, docs/http-contract.md). The parser would decode a
    // body declared latin1 as latin1: a client's UTF-8 text would be kept altered, without a word.
    if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new ApiError(
        415,
        'unsupported_media_type',
        `charset=${ctx.request.charset.slice(0, 40)} is not supported: send the body as UTF-8 JSON (charset=utf-8 or none)`,
      );
    }
    await parse(ctx, next);
  };
}

/** For routes whose body may be left out: no body at all reads as `{}`; a body must be JSON as above. */
export function optionalJsonBody(): Middleware {
  const parse = jsonBody();
  return async (ctx, next) => {
    const length = ctx.get('content-length');
    if (!ctx.get('transfer-encoding') && (length === '' || length === '0')) {
      ctx.request.body = {};
      return next();
    }
    await parse(ctx, next);
  };
}
