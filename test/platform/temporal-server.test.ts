// devtools/temporal-server.ts: the production Temporal server (built from go.temporal.io/server into
// the tool cache) set up on the tests' embedded Postgres, in databases of its own, as a one-member
// cluster with the service's namespace and search attributes. The two-member cluster under the
// whole service is test/e2e/production-topology.test.ts.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import { startTemporalCluster, type TemporalCluster } from '../../devtools/temporal-server.js';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.js';
import { requireTestEnv } from '../support/env.js';

const suffix = randomBytes(4).toString('hex');
const databases = { main: `temporal_${suffix}`, visibility: `temporal_visibility_${suffix}` };
const namespace = `platform-test-${suffix}`;
const url = new URL(requireTestEnv('TEST_DATABASE_URL'));
const postgres = { host: url.hostname, port: Number(url.port), user: url.username, password: decodeURIComponent(url.password) };
const dataDir = mkdtempSync(path.join(tmpdir(), 'temporal-server-test-'));
let cluster: TemporalCluster | undefined;

beforeAll(async () => {
  // Builds the server first when the tool cache lacks it (minutes on a fresh machine).
  cluster = await startTemporalCluster({ postgres, members: 1, dataDir, namespace, databases, maxConns: 2 });
}, 30 * 60_000);

afterAll(async () => {
  await cluster?.stop();
  const admin = new pg.Client({ ...postgres, database: url.pathname.slice(1) });
  await admin.connect();
  for (const database of Object.values(databases)) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('startTemporalCluster', () => {
  it('runs the Temporal server on Postgres with the namespace and the search attributes the service needs', async () => {
    const connection = await Connection.connect({ address: cluster!.address });
    try {
      const info = await connection.workflowService.getSystemInfo({});
      expect(info.serverVersion).toBe('1.32.2');
      const described = await connection.workflowService.describeNamespace({ namespace });
      expect(described.namespaceInfo?.name).toBe(namespace);
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining(Object.keys(SEARCH_ATTRIBUTES)));
    } finally {
      await connection.close();
    }
    // Its persistence is the Postgres given: the namespace is a row there.
    const store = new pg.Client({ ...postgres, database: databases.main });
    await store.connect();
    try {
      const { rows } = await store.query('SELECT name FROM namespaces WHERE name = $1', [namespace]);
      expect(rows).toEqual([{ name: namespace }]);
    } finally {
      await store.end();
    }
  });
});
