// Tables: issuers, api_keys. Issuers and their API keys as the operator manages them (admin CLI,
// `npm start`'s demo issuer), and the API's per-request key lookup. A key is shown once, at
// creation; only its lookup prefix and SHA-256 are stored (docs/http-contract.md).
import { generateKey, type KeyMode, type Scope } from '../domain/api-keys.js';
import { newId } from './ids.js';
import type { Pool, PoolClient } from './pool.js';

type Db = Pool | PoolClient;

const UNIQUE_VIOLATION = '23505';

export interface Issuer {
  id: string;
  name: string;
  createdAt: Date;
}

export interface IssuerSummary extends Issuer {
  activeKeys: number;
}

export interface CreatedApiKey {
  id: string;
  /** The whole key: returned here once and never stored. */
  key: string;
  issuerId: string;
  scopes: Scope[];
  mode: KeyMode;
  createdAt: Date;
}

export interface ApiKeySummary {
  id: string;
  issuerId: string;
  /** `cds_<mode>_` + the stored lookup characters: enough to recognise a key, useless to use it. */
  prefix: string;
  scopes: Scope[];
  mode: KeyMode;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export async function createIssuer(db: Db, name: string): Promise<Issuer> {
  const { rows } = await db.query<{ id: string; name: string; created_at: Date }>(
    'INSERT INTO issuers (id, name) VALUES ($1, $2) RETURNING id, name, created_at',
    [newId('iss'), name],
  );
  return { id: rows[0].id, name: rows[0].name, createdAt: rows[0].created_at };
}

export async function listIssuers(db: Db): Promise<IssuerSummary[]> {
  const { rows } = await db.query<{ id: string; name: string; created_at: Date; active_keys: number }>(
    `SELECT i.id, i.name, i.created_at,
            count(k.id) FILTER (WHERE k.revoked_at IS NULL)::int AS active_keys
       FROM issuers i LEFT JOIN api_keys k ON k.issuer_id = i.id
      GROUP BY i.id
      ORDER BY i.created_at, i.id`,
  );
  return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at, activeKeys: row.active_keys }));
}

export async function issuerExists(db: Db, issuerId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM issuers WHERE id = $1', [issuerId]);
  return rowCount === 1;
}

/** When `issuer erase` erased the issuer; undefined for one that was not (or does not exist). */
export async function issuerErasedAt(db: Db, issuerId: string): Promise<Date | undefined> {
  const { rows } = await db.query<{ erased_at: Date | null }>('SELECT erased_at FROM issuers WHERE id = $1', [issuerId]);
  return rows[0]?.erased_at ?? undefined;
}

/** Creates a key for the issuer; undefined when there is no such issuer, or it was erased. */
export async function createApiKey(
  db: Db,
  input: { issuerId: string; scopes: Scope[]; mode: KeyMode },
): Promise<CreatedApiKey | undefined> {
  // The lookup (12 base62 characters) is unique; a collision is astronomically unlikely but would
  // only cost a retry with a fresh key.
  for (let attempt = 1; ; attempt++) {
    const generated = generateKey(input.mode);
    try {
      const { rows } = await db.query<{ id: string; created_at: Date }>(
        `INSERT INTO api_keys (id, issuer_id, lookup, key_hash, scopes, mode)
         SELECT $1, id, $3, $4, $5, $6 FROM issuers WHERE id = $2 AND erased_at IS NULL
         RETURNING id, created_at`,
        [newId('key'), input.issuerId, generated.lookup, generated.hash, input.scopes, input.mode],
      );
      if (rows.length === 0) return undefined;
      return {
        id: rows[0].id,
        key: generated.key,
        issuerId: input.issuerId,
        scopes: input.scopes,
        mode: input.mode,
        createdAt: rows[0].created_at,
      };
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION || attempt >= 3) throw error;
    }
  }
}

/** The issuer's keys, newest first, without hashes; undefined when there is no such issuer. */
export async function listApiKeys(db: Db, issuerId: string): Promise<ApiKeySummary[] | undefined> {
  if (!(await issuerExists(db, issuerId))) return undefined;
  const { rows } = await db.query<{
    id: string;
    issuer_id: string;
    lookup: string;
    scopes: Scope[];
    mode: KeyMode;
    created_at: Date;
    revoked_at: Date | null;
    last_used_at: Date | null;
  }>(
    `SELECT id, issuer_id, lookup, scopes, mode, created_at, revoked_at, last_used_at
       FROM api_keys WHERE issuer_id = $1
      ORDER BY created_at DESC, id`,
    [issuerId],
  );
  return rows.map((row) => ({
    id: row.id,
    issuerId: row.issuer_id,
    prefix: `cds_${row.mode}_${row.lookup}`,
    scopes: row.scopes,
    mode: row.mode,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  }));
}

/**
 * Revokes a key. Idempotent: revoking it again keeps the first revocation time. Undefined when
 * there is no such key, or (with `scope.issuerId`, as the dashboard calls it) none of that issuer.
 */
export async function revokeApiKey(
  db: Db,
  keyId: string,
  scope: { issuerId?: string } = {},
): Promise<{ id: string; revokedAt: Date; alreadyRevoked: boolean } | undefined> {
  const { rows } = await db.query<{ id: string; revoked_at: Date; already_revoked: boolean }>(
    `UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now())
       FROM (SELECT id, revoked_at IS NOT NULL AS already_revoked FROM api_keys
              WHERE id = $1 AND ($2::text IS NULL OR issuer_id = $2) FOR UPDATE) before
      WHERE k.id = before.id
      RETURNING k.id, k.revoked_at, before.already_revoked`,
    [keyId, scope.issuerId ?? null],
  );
  if (rows.length === 0) return undefined;
  return { id: rows[0].id, revokedAt: rows[0].revoked_at, alreadyRevoked: rows[0].already_revoked };
}

// ---- The API's per-request key lookup (auth middleware): find a key row by its lookup prefix, and
// note that a key was used.

export interface ApiKeyRow {
  id: string;
  issuerId: string;
  keyHash: Buffer;
  scopes: Scope[];
  mode: KeyMode;
  revokedAt: Date | null;
}

export async function findApiKeyByLookup(pool: Pool, lookup: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await pool.query({
    name: 'api-key-by-lookup',
    text: 'SELECT id, issuer_id, key_hash, scopes, mode, revoked_at FROM api_keys WHERE lookup = $1',
    values: [lookup],
  });
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    issuerId: row.issuer_id,
    keyHash: row.key_hash,
    scopes: row.scopes,
    mode: row.mode,
    revokedAt: row.revoked_at,
  };
}

export async function touchApiKey(pool: Pool, keyId: string): Promise<void> {
  await pool.query({ name: 'api-key-touch', text: 'UPDATE api_keys SET last_used_at = now() WHERE id = $1', values: [keyId] });
}
