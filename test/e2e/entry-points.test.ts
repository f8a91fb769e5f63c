// The production shape: the separate API and worker processes docker-compose runs (`npm run
// start:api`, `npm run start:worker`), and `npm start` with TEMPORAL_ADDRESS and DATABASE_URL set,
// which starts only a worker and the API against them. Real processes, real Temporal and Postgres.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { SCOPES } from '../../domain/api-keys.js';
import { freePort } from '../../devtools/postgres.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { randomId, requireTestEnv } from '../support/env.js';
import { startEntryPoint as start } from '../support/processes.js';

let pool: Pool;
let key: string;
let base: Record<string, string>;

beforeAll(async () => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { applicationName: 'test-entry-points' });
  const issuer = await createIssuer(pool, 'Entry Points Issuer');
  key = (await createApiKey(pool, { issuerId: issuer.id, scopes: [...SCOPES], mode: 'live' }))!.key;
  base = {
    DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
    LOG_LEVEL: 'info',
  };
});

afterAll(async () => {
  await pool?.end();
});

async function registerAndRead(apiUrl: string) {
  const id = randomUUID();
  const registered = await request(apiUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) });
  expect(registered.status).toBe(201);
  const status = await request(apiUrl, `/v1/status/${id}`, { headers: bearer(key) });
  expect(status.status).toBe(200);
  expect(status.body).toEqual(registered.body);
}

describe('separate API and worker processes (docker-compose shape)', () => {
  it('serve registrations and reads together, and stop cleanly on SIGTERM', async () => {
    const env = { ...base, TEMPORAL_TASK_QUEUE: randomId('entry') };
    const port = await freePort();
    const worker = await start('worker/main.ts', env, 'worker started');
    const api = await start('api/main.ts', { ...env, PORT: String(port), HOST: '127.0.0.1' }, 'API listening');
    try {
      await registerAndRead(`http://127.0.0.1:${port}`);
    } finally {
      api.child.kill('SIGTERM');
      worker.child.kill('SIGTERM');
    }
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
  }, 90_000);

  it('stops start-up with a message naming a bad configuration variable', async () => {
    const api = start('api/main.ts', { ...base, PORT: 'not-a-port' }, 'API listening');
    await expect(api).rejects.toThrow(/exited with 1[\s\S]*PORT/);
  });
});

describe('npm start with TEMPORAL_ADDRESS and DATABASE_URL set', () => {
  it('starts only the worker and the API against them: no dev server, no embedded Postgres, no demo issuer', async () => {
    const port = await freePort();
    const started = await start('cli/start.ts', { ...base, TEMPORAL_TASK_QUEUE: randomId('prod'), PORT: String(port) }, 'Press Ctrl-C');
    try {
      const out = started.output();
      expect(out).toContain(`API:          http://localhost:${port}/v1`);
      expect(out).not.toMatch(/Temporal dev server started|using Postgres|Demo issuer/);
      await registerAndRead(`http://127.0.0.1:${port}`);
    } finally {
      started.child.kill('SIGINT');
    }
    expect(await started.exited).toBe(0);
  }, 90_000);
});
