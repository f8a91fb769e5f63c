// Server-side dashboard sessions. The browser holds a random id; the table holds only its SHA-256,
// the user, and the session's CSRF synchronizer token. A session ends after an idle time, after an
// absolute lifetime, at sign-out, or when the user's password is set again.
import { randomBytes } from 'node:crypto';
import { hashToken, newToken } from '../domain/opaque-tokens.js';
import type { Pool } from './pool.js';

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
