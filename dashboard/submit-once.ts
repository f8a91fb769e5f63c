// A creating form sent twice creates once. Every page's forms get a fresh one-time value (`_once`,
// render.ts); a form that creates something (a tracking feed, an API key, a webhook endpoint) puts it
// in a hidden field, and its handler, once the form is valid, creates through `submitOnce`:
//
//   return submitOnce(ctx, pool, async () => {
//     const key = await createApiKey(…);
//     return { path: '/dashboard/api-keys', reveal: { key: key.key, … } };
//   });
//
// The first request with the value creates and answers 303 to `path?created=<value>`; a second one
// (a double click while the first is still answered, a resubmission) waits for the first and is sent
// to the same place, creating nothing. What the result page shows once (`reveal`) is kept sealed
// (AES-256-GCM, keyed from the session's cookie value, which the database never holds) until that page
// takes it with `takeReveal`: the browser shows it once, whichever request it ends on, and a reload
// shows it no more. Without a signed-in session or a `_once` value the form is refused, naming it.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { claimSubmission, takeSealed } from '../db/form-submissions.js';
import type { Pool } from '../db/pool.js';
import { PageError } from './errors.js';

export const ONCE_FIELD = '_once';
const NONCE = /^[A-Za-z0-9_-]{22,64}$/;

/** A fresh value for a page's creating forms. */
export const newFormNonce = (): string => randomBytes(18).toString('base64url');

export interface Outcome {
  /** Where the result is shown (a dashboard path, without the `created` parameter). */
  path: string;
  /** What that page shows once. */
  reveal?: Record<string, unknown>;
  /** The dispatch that page is about (a tracking link's): its erasure removes the claim, which names it. */
  dispatchId?: string;
}

function sealFor(ctx: ParameterizedContext) {
  const seal = ctx.state.sessionSeal;
  if (!seal) throw new PageError(401, 'Sign in', 'Sign in to see this page.');
  return seal;
}

/**
 * Runs `create` once per value of the form's `_once` field and answers 303 to its result. `create`
 * returning undefined has answered itself (an error page) and creates nothing: the value stays free.
 */
export async function submitOnce(ctx: ParameterizedContext, pool: Pool, create: () => Promise<Outcome | undefined>): Promise<void> {
  const seal = sealFor(ctx);
  const nonce = (ctx.request.body as Record<string, unknown> | undefined)?.[ONCE_FIELD];
  if (typeof nonce !== 'string' || !NONCE.test(nonce)) {
    throw new PageError(400, 'Invalid form', `${ONCE_FIELD}: is required. Reload the page and send the form again.`);
  }
  const { first, location } = await claimSubmission(pool, seal.hash, nonce, async () => {
    const outcome = await create();
    if (!outcome) return undefined;
    const location = `${outcome.path}${outcome.path.includes('?') ? '&' : '?'}created=${nonce}`;
    return { location, dispatchId: outcome.dispatchId, sealed: outcome.reveal && sealReveal(seal.key, nonce, outcome.reveal) };
  });
  if (first && !location) return; // `create` answered
  if (!location) throw new PageError(409, 'Already sent', 'This form was sent already. Reload the page to see what it created.');
  ctx.status = 303;
  ctx.redirect(location);
}

/** What the request's `created` value's result shows once, or undefined (shown already, too old, not this session's). */
export async function takeReveal(ctx: ParameterizedContext, pool: Pool): Promise<Record<string, unknown> | undefined> {
  const nonce = ctx.query.created;
  const seal = ctx.state.sessionSeal;
  if (typeof nonce !== 'string' || !NONCE.test(nonce) || !seal) return undefined;
  const sealed = await takeSealed(pool, seal.hash, nonce);
  return sealed && openReveal(seal.key, nonce, sealed);
}

function sealReveal(key: Buffer, nonce: string, reveal: Record<string, unknown>): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(nonce));
  const body = Buffer.concat([cipher.update(JSON.stringify(reveal), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function openReveal(key: Buffer, nonce: string, sealed: Buffer): Record<string, unknown> | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12)).setAAD(Buffer.from(nonce));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
