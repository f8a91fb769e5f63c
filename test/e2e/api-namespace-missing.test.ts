// An API process whose TEMPORAL_NAMESPACE does not exist on its Temporal (a typo in the chart's
// values, a namespace not yet created): as with Temporal unreachable (docs/runbook.md "Temporal
// unreachable"), it serves reads, /readyz says `degraded`, and what needs Temporal answers 503
// service_unavailable, an operator's fix, with one start-up line naming the variable. Before, every
// registration and carrier event answered 500 and /readyz said `ready`.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint } from '../support/processes.js';
import { until } from '../support/until.js';

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness(); // its API and worker register the dispatch to read
  key = (await h.createKey(await h.createIssuer('Namespace Issuer'))).key;
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('an API process whose TEMPORAL_NAMESPACE Temporal does not have', () => {
  it('says so at start, serves reads, is degraded, answers 503 to what needs Temporal, and exits 0 on SIGTERM', async () => {
    const registered = randomUUID();
    expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(registered) })).status).toBe(201);

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const address = requireTestEnv('TEST_TEMPORAL_ADDRESS');
    const api = await startEntryPoint(
      'api/main.ts',
      {
        DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
        TEMPORAL_ADDRESS: address,
        TEMPORAL_NAMESPACE: 'no-such-namespace',
        TEMPORAL_TASK_QUEUE: h.taskQueue,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      },
      'API listening',
    );
    try {
      const warning = `TEMPORAL_NAMESPACE no-such-namespace does not exist on Temporal at ${address}`;
      await until(() => api.output().includes(warning), 'the start-up line naming TEMPORAL_NAMESPACE', 10_000);

      const read = await request(url, `/v1/status/${registered}`, { headers: bearer(key) });
      expect(read.status).toBe(200);
      expect((await request(url, '/readyz')).body).toEqual({ status: 'degraded', checks: { database: true, temporal: false } });

      const refused = await request(url, '/v1/dispatches', { headers: bearer(key), body: registrationFor(randomUUID()) });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ error: 'service_unavailable' });
      const event = { status: 'in_transit', occurred_at: new Date().toISOString(), event_id: randomUUID() };
      const eventRefused = await request(url, `/v1/dispatches/${registered}/events`, { headers: bearer(key), body: event });
      expect(eventRefused.status).toBe(503);
      expect(eventRefused.body).toMatchObject({ error: 'service_unavailable' });

      api.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
    } finally {
      if (api.child.exitCode === null) api.child.kill('SIGKILL');
    }
  }, 120_000);
});
