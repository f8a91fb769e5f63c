// API-key queries for the API's auth middleware: find a key row by its lookup prefix, and note that
// a key was used. (Creating and revoking keys is the admin CLI's business.)
import type { Scope, KeyMode } from '../domain/api-keys.js';
import type { Pool } from './pool.js';

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
