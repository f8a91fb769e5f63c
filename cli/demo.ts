// The demo issuer `npm start` creates on first run, so a new user can call the API at once.
// Its first key is printed once; later runs find the issuer and print how to make another key.
import { SCOPES } from '../domain/api-keys.js';
import { createApiKey, createIssuer } from '../db/issuers.js';
import type { Pool } from '../db/pool.js';

export const DEMO_ISSUER_NAME = 'Demo Issuer';

export async function ensureDemoIssuer(pool: Pool): Promise<{ issuerId: string; key?: string }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Two launchers on one database must not both create a demo issuer.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('cds-demo-issuer'))");
    const existing = await client.query<{ id: string }>('SELECT id FROM issuers WHERE name = $1 ORDER BY created_at LIMIT 1', [
      DEMO_ISSUER_NAME,
    ]);
    if (existing.rows.length > 0) {
      await client.query('COMMIT');
      return { issuerId: existing.rows[0].id };
    }
    const issuer = await createIssuer(client, DEMO_ISSUER_NAME);
    const key = await createApiKey(client, { issuerId: issuer.id, scopes: [...SCOPES], mode: 'live' });
    await client.query('COMMIT');
    return { issuerId: issuer.id, key: key!.key };
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}
