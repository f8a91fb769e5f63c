// `npm run admin -- user create` and `user reset-password` as an operator runs them: the --json
// shape of docs/admin-cli.md "Operator CLI", a link whose token is stored only as a hash, what a reset ends, and the
// one-line failures.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSession, findUserByEmail, findUserByPasswordToken, resumeSession, setPasswordWithToken } from '../../db/dashboard.js';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { hashToken } from '../../domain/opaque-tokens.js';
import { expectOneLineFailure, runCli } from '../support/cli.js';
import { randomId, requireTestEnv } from '../support/env.js';

let pool: Pool;
let databaseUrl: string;

beforeAll(() => {
  databaseUrl = requireTestEnv('TEST_DATABASE_URL');
  pool = createPool(databaseUrl, { max: 2, applicationName: 'test-user-cli' });
});

afterAll(async () => {
  await pool?.end();
});

describe('user create', () => {
  it('prints { id, email, issuer_id, set_password_url } with --json, the link on DASHBOARD_BASE_URL', async () => {
    const issuer = await createIssuer(pool, 'CLI Bank');
    const email = `${randomId('Ops')}@Example.test`;
    const result = await runCli(['user', 'create', '--issuer', issuer.id, '--email', email, '--json'], {
      DATABASE_URL: databaseUrl,
      DASHBOARD_BASE_URL: 'https://dash.example.test/',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(Object.keys(body).sort()).toEqual(['email', 'id', 'issuer_id', 'set_password_url']);
    expect(body).toMatchObject({ id: expect.stringMatching(/^usr_/), email: email.toLowerCase(), issuer_id: issuer.id });
    expect(body.set_password_url).toMatch(/^https:\/\/dash\.example\.test\/dashboard\/set-password\?token=[\w-]{43}$/);
  });

  it('stores only the hash of the link token, expiring in 24 hours', async () => {
    const issuer = await createIssuer(pool, 'Hash Bank');
    const result = await runCli(['user', 'create', '--issuer', issuer.id, '--email', `${randomId('u')}@example.test`, '--json'], {
      DATABASE_URL: databaseUrl,
    });
    const body = JSON.parse(result.stdout);
    expect(body.set_password_url).toMatch(/^http:\/\/localhost:3000\/dashboard\/set-password\?token=/);
    const token = new URL(body.set_password_url).searchParams.get('token')!;
    const { rows } = await pool.query(
      `SELECT token_hash, extract(epoch FROM expires_at - created_at) AS ttl FROM dashboard_password_tokens WHERE user_id = $1`,
      [body.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash.equals(hashToken(token))).toBe(true);
    expect(Number(rows[0].ttl)).toBe(24 * 3600);
  });

  it('fails with one line for an unknown issuer', async () => {
    const result = await runCli(['user', 'create', '--issuer', 'iss_nope', '--email', 'a@example.test'], { DATABASE_URL: databaseUrl });
    expectOneLineFailure(result, /^error: unknown issuer: iss_nope$/);
  });

  it('fails with one line for an email that already has an account, whatever its case', async () => {
    const issuer = await createIssuer(pool, 'Twice Bank');
    const email = `${randomId('twice')}@example.test`;
    expect((await runCli(['user', 'create', '--issuer', issuer.id, '--email', email], { DATABASE_URL: databaseUrl })).code).toBe(0);
    const again = await runCli(['user', 'create', '--issuer', issuer.id, '--email', email.toUpperCase()], { DATABASE_URL: databaseUrl });
    expectOneLineFailure(again, /^error: a dashboard user with email .* exists$/);
  });

  it('fails with one line for an address that is not an email', async () => {
    const result = await runCli(['user', 'create', '--issuer', 'iss_x', '--email', 'not-an-email'], { DATABASE_URL: databaseUrl });
    expectOneLineFailure(result, /^error: invalid --email: must be an email address$/);
  });
});

describe('user reset-password', () => {
  const lifetime = { idleMs: 60_000, maxMs: 3_600_000 };
  const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

  async function userWithPassword() {
    const issuer = await createIssuer(pool, 'Reset Bank');
    const created = await runCli(['user', 'create', '--issuer', issuer.id, '--email', `${randomId('reset')}@example.test`, '--json'], {
      DATABASE_URL: databaseUrl,
    });
    const body = JSON.parse(created.stdout);
    expect(await setPasswordWithToken(pool, tokenOf(body.set_password_url), 'argon2-hash-stand-in')).toBe(true);
    return { ...body, issuerId: issuer.id };
  }

  it('prints { id, email, issuer_id, set_password_url } with --json, and the new link sets a password once', async () => {
    const user = await userWithPassword();
    const result = await runCli(['user', 'reset-password', '--email', user.email.toUpperCase(), '--json'], { DATABASE_URL: databaseUrl });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body).toEqual({ id: user.id, email: user.email, issuer_id: user.issuerId, set_password_url: expect.any(String) });
    expect(body.set_password_url).not.toBe(user.set_password_url);
    expect(await findUserByPasswordToken(pool, tokenOf(body.set_password_url))).toMatchObject({ id: user.id });
    expect(await setPasswordWithToken(pool, tokenOf(body.set_password_url), 'new-hash')).toBe(true);
    expect(await setPasswordWithToken(pool, tokenOf(body.set_password_url), 'again')).toBe(false);
    expect((await findUserByEmail(pool, user.email))?.passwordHash).toBe('new-hash');
  });

  it('ends the old password, every session and every earlier unused link at once', async () => {
    const user = await userWithPassword();
    const session = await createSession(pool, user.id, lifetime);
    const first = JSON.parse(
      (await runCli(['user', 'reset-password', '--email', user.email, '--json'], { DATABASE_URL: databaseUrl })).stdout,
    );
    const second = JSON.parse(
      (await runCli(['user', 'reset-password', '--email', user.email, '--json'], { DATABASE_URL: databaseUrl })).stdout,
    );
    expect((await findUserByEmail(pool, user.email))?.passwordHash).toBeNull();
    expect(await resumeSession(pool, session, lifetime)).toBeUndefined();
    expect(await findUserByPasswordToken(pool, tokenOf(first.set_password_url))).toBeUndefined();
    expect(await findUserByPasswordToken(pool, tokenOf(second.set_password_url))).toMatchObject({ id: user.id });
  });

  it('fails with one line for an email that has no account', async () => {
    const result = await runCli(['user', 'reset-password', '--email', 'nobody@example.test'], { DATABASE_URL: databaseUrl });
    expectOneLineFailure(result, /^error: no dashboard user with email nobody@example\.test$/);
  });
});
