// Idempotency-Key on POST /v1/dispatches and /batch (docs/http-contract.md "Idempotency-Key"), with
// Stripe's semantics: within 24 hours, the same key with the same request (method, path and the
// canonical JSON of the body) replays the first response — same status, same body, plus
// `Idempotent-Replayed: true`; the same key with another request, or while the first is still
// running, is a 409 conflict. Keys belong to the issuer and mode of the API key that sends them, and
// live in Postgres (db/idempotency-keys.ts), so the rule holds across API processes.
//
// What is kept (Stripe: once the endpoint has begun executing): every answer below 500 given after
// the route called `markExecuting`, its 4xx errors included (a 409 for an id in use). Not kept, so
// the client may send the key again: a request that failed validation before that (400 naming a
// field; Stripe keeps none either), what is refused before the route runs (401, 403 for a missing
// scope, 429, a body that is not JSON, 413, 415), a batch with items not attempted or failed by the
// service (`markNotReplayable`), and, unlike Stripe, 5xx: here a 503 means Temporal or Postgres was
// unavailable and tells the client to retry, which is safe (the same derived ids, Temporal's one
// workflow per id), whereas a kept 503 would push the client to a new key and, for a registration
// without `id`, a new id: the second dispatch the key exists to prevent (docs/http-contract.md).
//
// A running request renews its claim every IDEMPOTENCY_RENEW_MS (`claimRenewal`), so no other process
// takes its key over however long it runs; the claim of a process that was killed lapses within
// IDEMPOTENCY_LOCK_MS, and the client's retry then runs (docs/design.md "What a killed API process
// keeps"). Meanwhile the retry gets the 409 "still in progress", with Retry-After.
//
// A registration without `id` sent with a key gets an id derived from the key and the request
// (`idempotentDispatchId`), not a random one: even when a retry takes over a key whose first
// request died mid-way (db/idempotency-keys.ts IDEMPOTENCY_LOCK_MS), it registers the same id and so
// never creates a second dispatch.
import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_RENEW_MS,
  releaseIdempotencyKey,
  renewIdempotencyClaims,
  type IdempotencyScope,
} from '../db/idempotency-keys.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../platform/logger.js';
import { ApiError, asApiError, badRequest, conflict } from './errors.js';
import { canonicalJson } from '../domain/canonical-json.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** 1–255 printable ASCII characters (space included). */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x20-\\x7e]{1,255}$';
const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);
/** Response headers a replay repeats (the X-RateLimit-* and X-Request-Id are the replaying request's own). */
const REPLAYED_HEADERS = ['Location'];
/** Expired keys are deleted by the API processes themselves, at most this often per process. */
const CLEANUP_EVERY_MS = 60_000;

interface Held {
  scope: IdempotencyScope;
  hash: string;
  replayable: boolean;
  /** Set by the route once the request passed validation and its work begins (`markExecuting`). */
  executing: boolean;
}

declare module 'koa' {
  interface DefaultState {
    /** The Idempotency-Key this request holds, when it sent one. */
    idempotency?: Held;
  }
}

/** SHA-256 of what makes two requests the same: method, path and the body's canonical JSON. */
export function idempotencyRequestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

/** The id a registration without `id` gets under an Idempotency-Key: a UUID v4 derived from the key and request. */
export function idempotentDispatchId(ctx: Context, index = 0): string | undefined {
  const held = ctx.state.idempotency;
  return held && derivedDispatchId(held.scope, held.hash, index);
}

/** The id derived for item `index` of the request with hash `requestHash` under the key of `scope`. */
export function derivedDispatchId({ issuerId, mode, key }: IdempotencyScope, requestHash: string, index = 0): string {
  const bytes = createHash('sha256')
    .update([issuerId, mode, key, requestHash, String(index)].join('\0'))
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The request passed validation and its work begins: from here its 4xx answers are kept too (Stripe's rule). */
export function markExecuting(ctx: Context): void {
  if (ctx.state.idempotency) ctx.state.idempotency.executing = true;
}

/** The response must not be replayed (a batch item the service could not attempt): the client may retry the key. */
export function markNotReplayable(ctx: Context): void {
  if (ctx.state.idempotency) ctx.state.idempotency.replayable = false;
}

/** The Idempotency-Key sent, if any; 400 naming the header when it is sent twice or is not 1–255 printable ASCII characters. */
export function idempotencyKeyHeader(ctx: Context): string | undefined {
  const sent = ctx.headers['idempotency-key'];
  if (sent === undefined) return undefined;
  // Node joins a header sent twice into one value ("a, b"): that would be a key nobody sent.
  if ((ctx.req.headersDistinct['idempotency-key']?.length ?? 0) > 1) {
    throw badRequest(`${IDEMPOTENCY_HEADER}: sent more than once; send the header once, with one key`);
  }
  if (typeof sent !== 'string' || !KEY.test(sent)) {
    throw badRequest(`${IDEMPOTENCY_HEADER}: must be 1 to 255 printable ASCII characters`);
  }
  return sent;
}

/**
 * The middleware; after the JSON body parser and the route's checks of its input (400, including
 * `idempotencyKeyHeader`) and of the key's scope (403), so that neither a bad request nor a key
 * without the scope claims a key or gets a replay; before the route's work.
 */
export function idempotent(pool: Pool, logger: Logger): Middleware {
  const claims = claimRenewal(pool, logger);
  let lastCleanup = 0;
  const cleanup = () => {
    if (Date.now() - lastCleanup < CLEANUP_EVERY_MS) return;
    lastCleanup = Date.now();
    deleteExpiredIdempotencyKeys(pool).catch((error: unknown) => logger.warn({ err: error }, 'expired idempotency keys not deleted'));
  };

  return async (ctx, next) => {
    const sent = idempotencyKeyHeader(ctx);
    if (sent === undefined) return next();
    const apiKey = ctx.state.apiKey!;
    const scope: IdempotencyScope = { issuerId: apiKey.issuerId, mode: apiKey.mode, key: sent };
    const hash = idempotencyRequestHash(ctx.method, ctx.path, ctx.request.body);
    cleanup();

    const claim = await claimIdempotencyKey(pool, scope, hash);
    if (claim.outcome === 'mismatch') {
      throw conflict(
        `${IDEMPOTENCY_HEADER}: this key was used in the last 24 hours for a different request (another body or path); ` +
          'send a new key for a new request',
      );
    }
    if (claim.outcome === 'in_flight') {
      const seconds = String(Math.ceil(IDEMPOTENCY_LOCK_MS / 1000));
      throw new ApiError(409, 'conflict', `${IDEMPOTENCY_HEADER}: a request with this key is still in progress; retry later`, {
        'Retry-After': seconds,
      });
    }
    if (claim.outcome === 'replay') {
      ctx.status = claim.response.statusCode;
      ctx.set(claim.response.headers);
      ctx.set(REPLAYED_HEADER, 'true');
      ctx.type = 'application/json';
      ctx.body = claim.response.body;
      return;
    }

    const held: Held = { scope, hash, replayable: true, executing: false };
    ctx.state.idempotency = held;
    const unhold = claims.hold({ scope, requestHash: hash });
    try {
      await answer(ctx, next, held);
    } finally {
      unhold();
    }
  };

  async function answer(ctx: Context, next: () => Promise<unknown>, held: Held): Promise<void> {
    const { scope, hash } = held;
    try {
      await next();
    } catch (error) {
      const known = asApiError(error);
      if (known && known.status < 500 && held.executing) {
        const headers = pick(known.headers);
        await completeIdempotencyKey(pool, scope, hash, {
          statusCode: known.status,
          headers,
          body: JSON.stringify({ error: known.code, message: known.message }),
        });
      } else {
        await releaseIdempotencyKey(pool, scope, hash).catch(() => undefined);
      }
      throw error;
    }
    if (ctx.status >= 500 || !held.replayable) {
      await releaseIdempotencyKey(pool, scope, hash);
      return;
    }
    // Sent as the very text that is stored, so a replay is byte for byte the first answer.
    const text = typeof ctx.body === 'string' ? ctx.body : JSON.stringify(ctx.body);
    ctx.type = 'application/json';
    ctx.body = text;
    const headers = pick(Object.fromEntries(REPLAYED_HEADERS.map((name) => [name, ctx.response.get(name)])));
    try {
      await completeIdempotencyKey(pool, scope, hash, { statusCode: ctx.status, headers, body: text });
    } catch (error) {
      // The work is done and the answer stands. The key stays claimed until its lease ends; a retry
      // then takes it over and, with the same derived ids, creates nothing twice.
      logger.warn({ err: error, request_id: ctx.state.requestId }, 'idempotency key response not stored');
    }
  }
}

/**
 * The claims of this process's requests still running, renewed together every
 * IDEMPOTENCY_RENEW_MS while there are any: a live request keeps its key however long it runs, and
 * the key of a request whose process died is free again within IDEMPOTENCY_LOCK_MS.
 */
function claimRenewal(pool: Pool, logger: Logger) {
  const running = new Set<{ scope: IdempotencyScope; requestHash: string }>();
  let timer: NodeJS.Timeout | undefined;
  let renewing = false;
  const renew = async () => {
    if (renewing || running.size === 0) return;
    renewing = true;
    try {
      await renewIdempotencyClaims(pool, [...running]);
    } catch (error) {
      logger.warn({ err: error }, 'idempotency key claims not renewed');
    } finally {
      renewing = false;
    }
  };
  return {
    /** Holds the claim until the returned function is called. */
    hold(claim: { scope: IdempotencyScope; requestHash: string }): () => void {
      running.add(claim);
      timer ??= setInterval(() => void renew(), IDEMPOTENCY_RENEW_MS).unref();
      return () => {
        running.delete(claim);
        if (running.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
  };
}

function pick(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => REPLAYED_HEADERS.includes(name) && value));
}
