// Tables: idempotency_keys.
// The Idempotency-Key store of POST /v1/dispatches and /batch (docs/http-contract.md
// "Idempotency-Key", the middleware is api/idempotency.ts). A request claims its key in one
// statement before it runs, so that two API processes never both run the same key; it completes the
// row with its response, or releases it when there is nothing to replay (a 5xx). Rows live 24 hours.
import type { Pool } from './pool.js';

/** How long a key keeps its response (Stripe's 24 hours). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;
/**
 * How long a claim holds without news from its request. The process running it renews the claims
 * it holds every `IDEMPOTENCY_RENEW_MS` (api/idempotency.ts), so a request of any length keeps its
 * key; a process that died mid-request (SIGKILL, a lost machine) stops renewing, and within this
 * lease a retry with the same body takes the key over (its registrations keep the ids the first
 * one derived, api/idempotency.ts, so it creates nothing twice; test/e2e/api-crash.test.ts).
 */
export const IDEMPOTENCY_LOCK_MS = 10_000;
/** How often a process renews the claims of its requests still running: several times per lease. */
export const IDEMPOTENCY_RENEW_MS = 2_000;

export interface IdempotencyScope {
  issuerId: string;
  mode: 'live' | 'test';
  key: string;
}

export interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export type Claim =
  { outcome: 'claimed' } | { outcome: 'replay'; response: StoredResponse } | { outcome: 'in_flight' } | { outcome: 'mismatch' };

// A new key is inserted; an expired row (older than the TTL), or a claim of the same request whose
// lease has run out, is taken over in the same statement. Anything else is left for `readKey`.
const CLAIM = `
  INSERT INTO idempotency_keys (issuer_id, mode, key, request_hash)
  VALUES ($1, $2, $3, $4)
  ON CONFLICT (issuer_id, mode, key) DO UPDATE
     SET request_hash = EXCLUDED.request_hash, created_at = now(), locked_at = now(),
         status_code = NULL, headers = NULL, body = NULL
   WHERE idempotency_keys.created_at < now() - make_interval(secs => $5::double precision / 1000)
      OR (idempotency_keys.status_code IS NULL
          AND idempotency_keys.request_hash = EXCLUDED.request_hash
          AND idempotency_keys.locked_at < now() - make_interval(secs => $6::double precision / 1000))
  RETURNING 1`;

/** Claims the key for this request, or says why not (its stored response, still in flight, another body). */
export async function claimIdempotencyKey(pool: Pool, scope: IdempotencyScope, requestHash: string): Promise<Claim> {
  // Twice at most: the row seen taken can be released (a 5xx) between the claim and the read.
  for (let attempt = 0; ; attempt++) {
    const claimed = await pool.query({
      name: 'idempotency-claim',
      text: CLAIM,
      values: [scope.issuerId, scope.mode, scope.key, requestHash, IDEMPOTENCY_KEY_TTL_MS, IDEMPOTENCY_LOCK_MS],
    });
    if (claimed.rowCount === 1) return { outcome: 'claimed' };
    const { rows } = await pool.query({
      name: 'idempotency-read',
      text: 'SELECT request_hash, status_code, headers, body FROM idempotency_keys WHERE issuer_id = $1 AND mode = $2 AND key = $3',
      values: [scope.issuerId, scope.mode, scope.key],
    });
    const row = rows[0];
    if (!row) {
      if (attempt < 1) continue;
      return { outcome: 'in_flight' };
    }
    if (row.request_hash !== requestHash) return { outcome: 'mismatch' };
    if (row.status_code === null) return { outcome: 'in_flight' };
    return { outcome: 'replay', response: { statusCode: row.status_code, headers: row.headers ?? {}, body: row.body } };
  }
}

/**
 * Stores the response the key's later requests replay. The database derives the dispatch ids it
 * names (`dispatch_ids`, a generated column, indexed: db/erasure.ts finds a dispatch's records by it).
 */
export async function completeIdempotencyKey(
  pool: Pool,
  scope: IdempotencyScope,
  requestHash: string,
  response: StoredResponse,
): Promise<void> {
  await pool.query({
    name: 'idempotency-complete',
    text: `UPDATE idempotency_keys SET status_code = $5, headers = $6, body = $7
            WHERE issuer_id = $1 AND mode = $2 AND key = $3 AND request_hash = $4 AND status_code IS NULL`,
    values: [scope.issuerId, scope.mode, scope.key, requestHash, response.statusCode, response.headers, response.body],
  });
}

/** Renews the claims of requests still running (one statement for all of a process's claims). */
export async function renewIdempotencyClaims(pool: Pool, claims: Array<{ scope: IdempotencyScope; requestHash: string }>): Promise<void> {
  await pool.query({
    name: 'idempotency-renew',
    text: `UPDATE idempotency_keys k SET locked_at = now()
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS c(issuer_id, mode, key, request_hash)
            WHERE k.issuer_id = c.issuer_id AND k.mode = c.mode AND k.key = c.key AND k.request_hash = c.request_hash
              AND k.status_code IS NULL`,
    values: [
      claims.map((c) => c.scope.issuerId),
      claims.map((c) => c.scope.mode),
      claims.map((c) => c.scope.key),
      claims.map((c) => c.requestHash),
    ],
  });
}

/** Gives the key up (nothing to replay: the client may retry it). */
export async function releaseIdempotencyKey(pool: Pool, scope: IdempotencyScope, requestHash: string): Promise<void> {
  await pool.query({
    name: 'idempotency-release',
    text: 'DELETE FROM idempotency_keys WHERE issuer_id = $1 AND mode = $2 AND key = $3 AND request_hash = $4 AND status_code IS NULL',
    values: [scope.issuerId, scope.mode, scope.key, requestHash],
  });
}

/** Deletes up to `limit` rows past the TTL; returns how many. */
export async function deleteExpiredIdempotencyKeys(pool: Pool, limit = 1_000): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM idempotency_keys
        WHERE created_at < now() - make_interval(secs => $1::double precision / 1000)
        LIMIT $2))`,
    [IDEMPOTENCY_KEY_TTL_MS, limit],
  );
  return rowCount ?? 0;
}
