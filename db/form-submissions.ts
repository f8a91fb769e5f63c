// Tables: dashboard_form_submissions (erasure removes those naming a dispatch: db/erasure.ts). A creating dashboard form's one-time value (dashboard/submit-once.ts):
// the first request with it claims it and creates, a second one waits for the first and is told
// where it went; what the result page shows once is kept sealed (encrypted by the caller) until
// shown, at most 10 minutes. Rows are keyed by the session's hash and go with the session.
import type { Pool } from './pool.js';

/** How long a sealed result waits to be shown; a claim is kept a day (a reload after that creates nothing stale). */
const SEALED_FOR = '10 minutes';
const KEPT_FOR = '1 day';

export interface Created {
  /** Where the browser is sent (by either request). */
  location: string;
  sealed?: Buffer;
  /** The dispatch the result page is about (a tracking link's), so that its erasure removes the claim. */
  dispatchId?: string;
}

/**
 * Runs `create` only if this (session, nonce) was not claimed yet, holding the claim in a transaction
 * so a concurrent second request waits for the first to commit (or roll back: then it claims in its
 * turn). `create` returning undefined (it answered with an error page) releases the claim.
 * Returns where the first request sent the browser, and whether this request was it.
 */
export async function claimSubmission(
  pool: Pool,
  sessionHash: Buffer,
  nonce: string,
  create: () => Promise<Created | undefined>,
): Promise<{ first: boolean; location: string | undefined }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const claimed = await client.query(
      `INSERT INTO dashboard_form_submissions (session_hash, nonce) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1`,
      [sessionHash, nonce],
    );
    if (claimed.rowCount === 0) {
      const { rows } = await client.query<{ location: string | null }>(
        'SELECT location FROM dashboard_form_submissions WHERE session_hash = $1 AND nonce = $2',
        [sessionHash, nonce],
      );
      await client.query('COMMIT');
      return { first: false, location: rows[0]?.location ?? undefined };
    }
    const created = await create();
    if (!created) {
      await client.query('ROLLBACK');
      return { first: true, location: undefined };
    }
    await client.query(
      'UPDATE dashboard_form_submissions SET location = $3, sealed = $4, dispatch_id = $5 WHERE session_hash = $1 AND nonce = $2',
      [sessionHash, nonce, created.location, created.sealed ?? null, created.dispatchId ?? null],
    );
    await client.query('COMMIT');
    // Old claims are swept here, as expired sessions are at sign-in: creating is rare and cheap to piggyback.
    await pool.query(`DELETE FROM dashboard_form_submissions WHERE created_at < now() - interval '${KEPT_FOR}'`);
    await pool.query(
      `UPDATE dashboard_form_submissions SET sealed = NULL WHERE sealed IS NOT NULL AND created_at < now() - interval '${SEALED_FOR}'`,
    );
    return { first: true, location: created.location };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The sealed result of (session, nonce), cleared in the same statement: a second read (a reload) gets nothing. */
export async function takeSealed(pool: Pool, sessionHash: Buffer, nonce: string): Promise<Buffer | undefined> {
  const { rows } = await pool.query<{ sealed: Buffer; fresh: boolean }>(
    `UPDATE dashboard_form_submissions s SET sealed = NULL
       FROM (SELECT session_hash, nonce, sealed, created_at FROM dashboard_form_submissions
              WHERE session_hash = $1 AND nonce = $2 AND sealed IS NOT NULL FOR UPDATE) old
      WHERE s.session_hash = old.session_hash AND s.nonce = old.nonce
      RETURNING old.sealed, old.created_at > now() - interval '${SEALED_FOR}' AS fresh`,
    [sessionHash, nonce],
  );
  return rows[0]?.fresh ? rows[0].sealed : undefined;
}
