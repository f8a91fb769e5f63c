// Signing in and out, and setting a password from a one-time link. Failures say the same thing for
// an unknown email and a wrong password (no user enumeration); attempts are limited per email + client
// address, per account and per client address (sign-in-limiter.ts).
import type Router from '@koa/router';
import { z } from 'zod';
import { findUserByEmail, findUserByPasswordToken, setPasswordWithToken } from '../../db/dashboard.js';
import type { DashboardDeps } from '../deps.js';
import { PageError } from '../errors.js';
import { HOME } from '../nav.js';
import { hashPassword, PASSWORD_MIN_LENGTH, passwordSchema, verifyPassword } from '../passwords.js';
import { FIELD_ERRORS, firstProblem } from '../form-errors.js';
import { renderPage } from '../render.js';
import { signIn, signOut } from '../session.js';
import { SignInLimiter } from '../sign-in-limiter.js';

const WRONG_CREDENTIALS = 'Incorrect email or password.';

const signInForm = z.object({ email: z.string().trim().max(320).default(''), password: z.string().max(1024).default('') });
const setPasswordForm = z.object({
  token: z.string().max(200).default(''),
  password: z.string().default(''),
  confirm: z.string().default(''),
});

const invalidLink = () =>
  new PageError(404, 'Link expired', 'This set-password link is invalid, expired or already used. Ask your operator for a new one.');

export function signInRoutes(router: Router, deps: DashboardDeps): void {
  const { pool, cookies, sessionLifetime } = deps;
  const limiter = new SignInLimiter(pool);

  router.get('/sign-in', (ctx) => {
    if (ctx.state.session) return ctx.redirect(HOME);
    const notice = ctx.query.notice === 'password-set' ? 'Your password is set. Sign in with it.' : undefined;
    renderPage(ctx, 'sign-in', { title: 'Sign in', notice });
  });

  router.post('/sign-in', async (ctx) => {
    const form = signInForm.parse(ctx.request.body ?? {}, FIELD_ERRORS);
    // Counted before the password is verified, so parallel attempts cannot all slip past the limits.
    const waitSeconds = await limiter.admit(form.email, ctx.ip);
    if (waitSeconds > 0) {
      const minutes = Math.ceil(waitSeconds / 60);
      const error = `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
      ctx.set('Retry-After', String(waitSeconds));
      return renderPage(ctx, 'sign-in', { title: 'Sign in', error, email: form.email }, 429);
    }
    const user = await findUserByEmail(pool, form.email);
    if (!(await verifyPassword(user?.passwordHash, form.password)) || !user)
      return renderPage(ctx, 'sign-in', { title: 'Sign in', error: WRONG_CREDENTIALS, email: form.email }, 401);
    await limiter.succeeded(form.email, ctx.ip);
    await signIn(ctx, pool, cookies, sessionLifetime, user.id);
    ctx.status = 303;
    ctx.redirect(HOME);
  });

  router.post('/sign-out', async (ctx) => {
    await signOut(ctx, pool, cookies);
    ctx.status = 303;
    ctx.redirect('/dashboard/sign-in');
  });

  router.get('/set-password', async (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    const user = token ? await findUserByPasswordToken(pool, token) : undefined;
    if (!user) throw invalidLink();
    renderPage(ctx, 'set-password', { title: 'Set your password', email: user.email, token, minLength: PASSWORD_MIN_LENGTH });
  });

  router.post('/set-password', async (ctx) => {
    const form = setPasswordForm.parse(ctx.request.body ?? {}, FIELD_ERRORS);
    const user = form.token ? await findUserByPasswordToken(pool, form.token) : undefined;
    if (!user) throw invalidLink();
    const again = (error: string) =>
      renderPage(
        ctx,
        'set-password',
        { title: 'Set your password', email: user.email, token: form.token, minLength: PASSWORD_MIN_LENGTH, error },
        400,
      );
    const password = passwordSchema.safeParse(form.password, FIELD_ERRORS);
    if (!password.success) return again(firstProblem(password.error));
    if (form.password !== form.confirm) return again('The two passwords differ.');
    // Consumed atomically: of two racing submissions only one sets the password.
    if (!(await setPasswordWithToken(pool, form.token, await hashPassword(password.data)))) throw invalidLink();
    ctx.status = 303;
    ctx.redirect('/dashboard/sign-in?notice=password-set');
  });
}
