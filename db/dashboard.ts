// Tables: dashboard_users, dashboard_password_tokens, dashboard_sessions. Dashboard users and their
// one-time set-password tokens: a user belongs to exactly one issuer; a token is stored only as its
// hash, expires, and is consumed by the single statement that sets the password, so it can be used
// once however many requests race for it. Then the users' server-side sessions.
import { randomBytes } from 'node:crypto';
import { hashToken, newToken } from '../domain/opaque-tokens.js';
import { newId } from './ids.js';
import type { Pool } from './pool.js';

const UNIQUE_VIOLATION = '23505';

export interface DashboardUser {
  id: string;
  issuerId: string;
  email: string;
}

export interface UserWithPassword extends DashboardUser {
  passwordHash: string | null;
}

export class EmailTakenError extends Error {}

/**
 * Creates a user of the issuer with a set-password token valid for `tokenTtlMs`. Undefined when
 * there is no such issuer; EmailTakenError when the address already has an account.
 */
export async function createDashboardUser(
  pool: Pool,
  input: { issuerId: string; email: string; tokenTtlMs: number },
): Promise<{ user: DashboardUser; token: string } | undefined> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ id: string; issuer_id: string; email: string }>(
      `INSERT INTO dashboard_users (id, issuer_id, email)
       SELECT $1, id, $3 FROM issuers WHERE id = $2 AND erased_at IS NULL
       RETURNING id, issuer_id, email`,
      [newId('usr'), input.issuerId, input.email.toLowerCase()],
    );
    if (rows.length === 0) {
      await client.query('ROLLBACK');
      return undefined;
    }
    const { token, hash } = newToken();
    await client.query(
      `INSERT INTO dashboard_password_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')`,
      [hash, rows[0].id, input.tokenTtlMs],
    );
    await client.query('COMMIT');
    return { user: { id: rows[0].id, issuerId: rows[0].issuer_id, email: rows[0].email }, token };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    if ((error as { code?: string }).code === UNIQUE_VIOLATION)
      throw new EmailTakenError(`a dashboard user with email ${input.email} exists`);
    throw error;
  } finally {
    client.release();
  }
}

/** The user a still-valid, unused set-password token belongs to (to greet them on the form). */
export async function findUserByPasswordToken(pool: Pool, token: string): Promise<DashboardUser | undefined> {
  const { rows } = await pool.query<{ id: string; issuer_id: string; email: string }>(
    `SELECT u.id, u.issuer_id, u.email
       FROM dashboard_password_tokens t JOIN dashboard_users u ON u.id = t.user_id
      WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > now()`,
    [hashToken(token)],
  );
  return rows[0] && { id: rows[0].id, issuerId: rows[0].issuer_id, email: rows[0].email };
}

/**
 * Consumes the token and sets the password hash in one statement; every session of the user ends
 * (a new password must lock out whoever held the old one). False when the token is unknown,
 * expired or already used.
 */
export async function setPasswordWithToken(pool: Pool, token: string, passwordHash: string): Promise<boolean> {
  const { rows } = await pool.query<{ user_id: string }>(
    `WITH consumed AS (
       UPDATE dashboard_password_tokens SET used_at = now()
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING user_id
     ), updated AS (
       UPDATE dashboard_users u SET password_hash = $2, password_set_at = now()
         FROM consumed WHERE u.id = consumed.user_id
         RETURNING u.id
     ), ended AS (
       DELETE FROM dashboard_sessions s USING updated WHERE s.user_id = updated.id
     )
     SELECT id AS user_id FROM updated`,
    [hashToken(token), passwordHash],
  );
  return rows.length === 1;
}

export async function findUserByEmail(pool: Pool, email: string): Promise<UserWithPassword | undefined> {
  const { rows } = await pool.query<{ id: string; issuer_id: string; email: string; password_hash: string | null }>(
    'SELECT id, issuer_id, email, password_hash FROM dashboard_users WHERE email = $1',
    [email.toLowerCase()],
  );
  const row = rows[0];
  return row && { id: row.id, issuerId: row.issuer_id, email: row.email, passwordHash: row.password_hash };
}

/**
 * An operator's password reset: the user's password is cleared and every session and earlier
 * set-password link ends at once (a reset also serves a suspected compromise), and a new link valid
 * for `tokenTtlMs` is issued. Undefined when no user has this email.
 */
export async function resetDashboardPassword(
  pool: Pool,
  input: { email: string; tokenTtlMs: number },
): Promise<{ user: DashboardUser; token: string } | undefined> {
  const { token, hash } = newToken();
  const { rows } = await pool.query<{ id: string; issuer_id: string; email: string }>(
    `WITH target AS (
       UPDATE dashboard_users SET password_hash = NULL, password_set_at = NULL WHERE email = $1
       RETURNING id, issuer_id, email
     ), revoked AS (
       UPDATE dashboard_password_tokens t SET used_at = now() FROM target
        WHERE t.user_id = target.id AND t.used_at IS NULL
     ), ended AS (
       DELETE FROM dashboard_sessions s USING target WHERE s.user_id = target.id
     ), issued AS (
       INSERT INTO dashboard_password_tokens (token_hash, user_id, expires_at)
       SELECT $2, id, now() + $3 * interval '1 millisecond' FROM target
     )
     SELECT id, issuer_id, email FROM target`,
    [input.email.toLowerCase(), hash, input.tokenTtlMs],
  );
  return rows[0] && { user: { id: rows[0].id, issuerId: rows[0].issuer_id, email: rows[0].email }, token };
}

// ---- Sessions. The browser holds a random id; the table holds only its SHA-256, the user, and the
// session's CSRF synchronizer token. A session ends after an idle time, after an absolute lifetime,
// at sign-out, or when the user's password is set again.

export interface SessionLifetime {
  idleMs: number;
  maxMs: number;
}

export interface ActiveSession {
  userId: string;
  email: string;
  issuerId: string;
  issuerName: string;
  csrfToken: string;
}

/** Starts a session for the user; returns the id for the cookie (never stored as such). */
export async function createSession(pool: Pool, userId: string, lifetime: SessionLifetime): Promise<string> {
  const { token, hash } = newToken();
  await pool.query('INSERT INTO dashboard_sessions (id_hash, user_id, csrf_token) VALUES ($1, $2, $3)', [
    hash,
    userId,
    randomBytes(32).toString('base64url'),
  ]);
  // Expired sessions are swept here rather than by a timer: sign-ins are rare and cheap to piggyback.
  await pool.query(
    `DELETE FROM dashboard_sessions
      WHERE last_seen_at < now() - $1 * interval '1 millisecond' OR created_at < now() - $2 * interval '1 millisecond'`,
    [lifetime.idleMs, lifetime.maxMs],
  );
  return token;
}

/**
 * The live session behind a cookie value, its idle clock restarted, in one statement; undefined
 * when unknown, idle too long or past its absolute lifetime.
 */
export async function resumeSession(pool: Pool, sessionId: string, lifetime: SessionLifetime): Promise<ActiveSession | undefined> {
  const { rows } = await pool.query<{ user_id: string; email: string; issuer_id: string; issuer_name: string; csrf_token: string }>({
    name: 'dashboard-session-resume',
    text: `UPDATE dashboard_sessions s SET last_seen_at = now()
             FROM dashboard_users u JOIN issuers i ON i.id = u.issuer_id
            WHERE s.id_hash = $1 AND u.id = s.user_id
              AND s.last_seen_at > now() - $2 * interval '1 millisecond'
              AND s.created_at > now() - $3 * interval '1 millisecond'
        RETURNING s.user_id, u.email, u.issuer_id, i.name AS issuer_name, s.csrf_token`,
    values: [hashToken(sessionId), lifetime.idleMs, lifetime.maxMs],
  });
  const row = rows[0];
  return row && { userId: row.user_id, email: row.email, issuerId: row.issuer_id, issuerName: row.issuer_name, csrfToken: row.csrf_token };
}

export async function deleteSession(pool: Pool, sessionId: string): Promise<void> {
  await pool.query('DELETE FROM dashboard_sessions WHERE id_hash = $1', [hashToken(sessionId)]);
}
