// db/migrations/1732380000000_webhook_endpoints_api.sql, its scope step (docs/http-contract.md
// "Scopes"): a key that held every earlier scope (what a key created without --scopes had) gains
// webhooks:read and webhooks:write; a key with fewer scopes, or one that already has a webhooks
// scope, is left as it was. The statement is read from the migration file and run on keys made the
// way the CLI made them before the new scopes existed.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import type { Scope } from '../../domain/api-keys.js';
import { requireTestEnv } from '../support/env.js';

const MIGRATION = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../db/migrations/1732380000000_webhook_endpoints_api.sql');

/** The migration's UPDATE of api_keys (its Up part), limited to `ids` so that other tests' keys are untouched. */
function scopeStep(): string {
  const up = readFileSync(MIGRATION, 'utf8').split('-- Down Migration')[0];
  const statement = /UPDATE api_keys[\s\S]*?;/.exec(up)?.[0];
  if (!statement) throw new Error('no UPDATE api_keys in the migration');
  return `${statement.slice(0, -1)} AND id = ANY ($1::text[])`;
}

let pool: Pool;

beforeAll(() => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-scopes-migration' });
});

afterAll(async () => {
  await pool?.end();
});

describe('the webhooks scopes migration', () => {
  it('gives both new scopes to keys that had every earlier scope, and only to them', async () => {
    const issuer = (await createIssuer(pool, 'Scopes Migration Issuer')).id;
    const make = async (scopes: Scope[]) => (await createApiKey(pool, { issuerId: issuer, scopes, mode: 'live' }))!.id;
    const everyOld = await make(['status:read', 'dispatches:write', 'events:write']);
    const reordered = await make(['events:write', 'status:read', 'dispatches:write']);
    const fewer = await make(['status:read', 'events:write']);
    const alreadyRead = await make(['status:read', 'dispatches:write', 'events:write', 'webhooks:read']);
    const ids = [everyOld, reordered, fewer, alreadyRead];

    await pool.query(scopeStep(), [ids]);
    await pool.query(scopeStep(), [ids]); // running it twice changes nothing more

    const { rows } = await pool.query<{ id: string; scopes: string[] }>('SELECT id, scopes FROM api_keys WHERE id = ANY ($1::text[])', [
      ids,
    ]);
    const scopes = Object.fromEntries(rows.map((row) => [row.id, row.scopes]));
    expect(scopes[everyOld]).toEqual(['status:read', 'dispatches:write', 'events:write', 'webhooks:read', 'webhooks:write']);
    expect(scopes[reordered]).toEqual(['events:write', 'status:read', 'dispatches:write', 'webhooks:read', 'webhooks:write']);
    expect(scopes[fewer]).toEqual(['status:read', 'events:write']);
    expect(scopes[alreadyRead]).toEqual(['status:read', 'dispatches:write', 'events:write', 'webhooks:read']);
  });
});
