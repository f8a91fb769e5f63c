// Sessions and CSRF for the dashboard. The session cookie holds a random id (the database keeps its
// hash, db/dashboard.ts); it is HttpOnly, SameSite=Lax, and Secure with the __Host- prefix
// when the dashboard is served over https. Every POST must carry a synchronizer token in `_csrf`:
// the session's own token, or, before sign-in (sign-in and set-password forms), the token of a
// short-lived SameSite=Strict cookie, so a cross-site form can neither act as the user nor sign the
// browser into an attacker's account.
import { hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { createSession, deleteSession, resumeSession, type ActiveSession, type SessionLifetime } from '../db/dashboard.js';
import { hashToken } from '../domain/opaque-tokens.js';
import type { Pool } from '../db/pool.js';
import { csrfRejected } from './errors.js';

declare module 'koa' {
  interface DefaultState {
    /** The signed-in dashboard user's session, when the cookie named a live one. */
    session?: ActiveSession;
    /** The token the page's forms must send back as `_csrf`. */
    csrfToken?: string;
    /** The signed-in session's hash (as stored) and a key derived from its cookie value (never stored): submit-once.ts. */
    sessionSeal?: { hash: Buffer; key: Buffer };
  }
}

export interface CookiePolicy {
  secure: boolean;
}

const names = (policy: CookiePolicy) =>
  policy.secure ? { session: '__Host-cds_session', form: '__Host-cds_form' } : { session: 'cds_session', form: 'cds_form' };

function cookieOptions(ctx: Context, policy: CookiePolicy, sameSite: 'lax' | 'strict', maxAge?: number) {
  // Behind a TLS-terminating proxy Koa sees plain http; the configuration is what says https.
  if (policy.secure) ctx.cookies.secure = true;
  return { httpOnly: true, sameSite, secure: policy.secure, path: '/', signed: false, overwrite: true, maxAge } as const;
}

/** Loads the session named by the cookie into ctx.state.session (restarting its idle clock). */
export function loadSession(pool: Pool, policy: CookiePolicy, lifetime: SessionLifetime): Middleware {
  return async (ctx, next) => {
    const id = ctx.cookies.get(names(policy).session);
    if (id) {
      ctx.state.session = await resumeSession(pool, id, lifetime);
      if (ctx.state.session) ctx.state.sessionSeal = { hash: hashToken(id), key: Buffer.from(hkdfSync('sha256', id, '', 'cds dashboard form results', 32)) }; // prettier-ignore
      if (!ctx.state.session) ctx.cookies.set(names(policy).session, null, cookieOptions(ctx, policy, 'lax'));
    }
    await next();
  };
}

export async function signIn(ctx: Context, pool: Pool, policy: CookiePolicy, lifetime: SessionLifetime, userId: string): Promise<void> {
  // A fresh id at every sign-in: an id planted before sign-in (session fixation) is worth nothing.
  const previous = ctx.cookies.get(names(policy).session);
  if (previous) await deleteSession(pool, previous);
  const id = await createSession(pool, userId, lifetime);
  ctx.cookies.set(names(policy).session, id, cookieOptions(ctx, policy, 'lax'));
  ctx.cookies.set(names(policy).form, null, cookieOptions(ctx, policy, 'strict'));
}

export async function signOut(ctx: Context, pool: Pool, policy: CookiePolicy): Promise<void> {
  const id = ctx.cookies.get(names(policy).session);
  if (id) await deleteSession(pool, id);
  ctx.cookies.set(names(policy).session, null, cookieOptions(ctx, policy, 'lax'));
}

function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Puts the page's CSRF token in ctx.state.csrfToken (issuing a pre-session one when signed out)
 * and answers 403 to any POST whose `_csrf` field does not match it.
 */
export function csrfProtection(policy: CookiePolicy): Middleware {
  return async (ctx, next) => {
    const formCookie = names(policy).form;
    const expected = ctx.state.session?.csrfToken ?? ctx.cookies.get(formCookie);
    // Set before the check, so that even the 403 page's own forms (sign-out) carry a valid token.
    if (expected) {
      ctx.state.csrfToken = expected;
    } else {
      ctx.state.csrfToken = randomBytes(32).toString('base64url');
      ctx.cookies.set(formCookie, ctx.state.csrfToken, cookieOptions(ctx, policy, 'strict', 2 * 3_600_000));
    }
    if (ctx.method === 'POST') {
      const sent = (ctx.request.body as Record<string, unknown> | undefined)?._csrf;
      if (!sameToken(typeof sent === 'string' ? sent : undefined, expected)) throw csrfRejected();
    }
    await next();
  };
}
