// `npm start` runs the worker in its own process, and with it the worker's metrics server
// (docs/monitoring.md "Metrics"): WORKER_METRICS_PORT answers /healthz, /readyz and /metrics (ours and
// the Temporal SDK's), beside the API's /metrics. Production shape (TEMPORAL_ADDRESS and
// DATABASE_URL set), so nothing but the worker and the API start.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { randomId, requireTestEnv } from '../support/env.js';
import { startEntryPoint, type Started } from '../support/processes.js';
import { hasSeries, scrape } from '../support/prometheus.js';
import { until } from '../support/until.js';

let started: Started;
let apiUrl: string;
let workerUrl: string;

beforeAll(async () => {
  const [apiPort, workerPort] = [await freePort(), await freePort()];
  apiUrl = `http://127.0.0.1:${apiPort}`;
  workerUrl = `http://127.0.0.1:${workerPort}`;
  started = await startEntryPoint(
    'cli/start.ts',
    {
      DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
      TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
      TEMPORAL_TASK_QUEUE: randomId('start-metrics'),
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      WORKER_METRICS_PORT: String(workerPort),
      LOG_LEVEL: 'warn',
    },
    'Press Ctrl-C',
  );
}, 120_000);

afterAll(async () => {
  started?.child.kill('SIGINT');
  await started?.exited;
});

describe('npm start', () => {
  it("serves the worker's /healthz, /readyz and /metrics on WORKER_METRICS_PORT, and says where", async () => {
    expect(started.output()).toContain(`${workerUrl}/metrics (worker`);
    expect((await fetch(`${workerUrl}/healthz`)).status).toBe(200);
    await until(async () => (await fetch(`${workerUrl}/readyz`)).status === 200, "the worker's /readyz to answer 200");
    const worker = await until(async () => {
      const m = await scrape(`${workerUrl}/metrics`);
      return m.samples.some((s) => s.name.startsWith('temporal_')) ? m : undefined;
    }, 'temporal_ metrics on the worker port');
    expect(hasSeries(worker, 'cds_webhook_deliveries_pending', { age: 'under_1m' })).toBe(true);
  });

  it('serves the API /metrics on the API port', async () => {
    const api = await scrape(`${apiUrl}/metrics`);
    expect(api.types.some(([name]) => name === 'cds_http_request_duration_seconds')).toBe(true);
  });
});
