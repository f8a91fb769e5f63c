// Tables: rate_limit_windows.
// Fixed one-minute rate-limit windows shared by every API process (docs/http-contract.md), as two
// statements. Each counter write runs with synchronous_commit off (set for its own transaction only,
// inside the statement, so it costs no extra round trip): losing a few counts in a crash is
// acceptable, waiting for a WAL flush on every request is not.
import type { Pool } from './pool.js';

export interface WindowCount {
  /** Count before this call's requests were added. */
  before: number;
  /** Count after; never above the limit, so `after - before` requests were admitted. */
  after: number;
}

// The count is clamped at the limit: requests beyond it are refused and leave no trace, so a
// refused request never moves the window. The pre-update count comes from a locking subquery, the
// usual way to return a row's old value from an UPDATE on Postgres < 18.
const ADD = {
  name: 'rate-limit-add',
  text: `WITH local_settings AS (SELECT set_config('synchronous_commit', 'off', true))
         UPDATE rate_limit_windows AS w
            SET count = LEAST($4::integer, w.count + $3::integer)
           FROM (SELECT count FROM rate_limit_windows
                  WHERE subject = $1 AND window_start = $2 FOR UPDATE) AS old,
                local_settings
          WHERE w.subject = $1 AND w.window_start = $2
      RETURNING old.count AS before, w.count AS after`,
};

const OPEN = {
  name: 'rate-limit-open',
  text: `WITH local_settings AS (SELECT set_config('synchronous_commit', 'off', true))
         INSERT INTO rate_limit_windows (subject, window_start, count)
         SELECT $1, $2, LEAST($4::integer, $3::integer) FROM local_settings
         ON CONFLICT (subject, window_start) DO NOTHING
      RETURNING count AS after`,
};

/**
 * Adds up to `requests` to the subject's window without passing `limit`; returns the counts
 * before and after. `windowStart` is the window's start in epoch seconds.
 */
export async function addToWindow(pool: Pool, subject: string, windowStart: number, requests: number, limit: number): Promise<WindowCount> {
  const values = [subject, windowStart, requests, limit];
  // Usually the window exists (one statement); the first request of a window opens it. Two
  // processes may open it at once: the loser's INSERT does nothing and it updates instead.
  for (let attempt = 0; attempt < 3; attempt++) {
    const updated = await pool.query({ ...ADD, values });
    if (updated.rows[0]) return { before: updated.rows[0].before, after: updated.rows[0].after };
    const opened = await pool.query({ ...OPEN, values });
    if (opened.rows[0]) return { before: 0, after: opened.rows[0].after };
  }
  throw new Error(`rate limit window ${subject}@${windowStart} could be neither updated nor created`);
}

/** Deletes windows that ended before `windowStart` (epoch seconds). */
export async function deleteWindowsBefore(pool: Pool, windowStart: number): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM rate_limit_windows WHERE window_start < $1', [windowStart]);
  return rowCount ?? 0;
}
