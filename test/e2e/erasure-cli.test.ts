// The operator's erasure and retention commands that hand their work to the service's worker
// (`dispatch erase`, `retention run`; docs/admin-cli.md) when no worker polls the task queue they
// name (the worker is down, or TEMPORAL_TASK_QUEUE differs from the service's): a failed command
// with a one-line reason that names the queue, at once, rather than a command that waits for
// ever or an erasure left to a queue that nobody polls; the same erasure asked again with the
// service's queue then completes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dispatchFootprint } from '../../db/erasure.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { expectOneLineFailure, runCli } from '../support/cli.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let key: string;
const cliEnv = (taskQueue = h.taskQueue) => ({
  DATABASE_URL: h.config.DATABASE_URL!,
  TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
  TEMPORAL_TASK_QUEUE: taskQueue,
  WEBHOOK_TIMEOUT_MS: '1000',
});

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_TIMEOUT_MS: '1000' } });
  key = (await h.createKey(await h.createIssuer('Erasure CLI'))).key;
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('with no worker on the task queue it names', () => {
  const idle = `no-worker-${randomUUID()}`;

  it('retention run fails at once with a one-line reason naming the queue', async () => {
    const started = Date.now();
    const result = await runCli(['retention', 'run', '--json'], cliEnv(idle), 30_000);
    expectOneLineFailure(result, new RegExp(`no worker polls the task queue "${idle}"`));
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 40_000);

  it('dispatch erase fails with a one-line reason, records no erasure, and erases with the service queue', async () => {
    const id = randomUUID();
    expect((await request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) })).status).toBe(201); // prettier-ignore
    const refused = await runCli(['dispatch', 'erase', '--id', id, '--json'], cliEnv(idle), 30_000);
    expectOneLineFailure(refused, new RegExp(`no worker polls the task queue "${idle}"`));
    expect((await h.pool.query('SELECT 1 FROM erasures WHERE dispatch_id = $1', [id])).rowCount).toBe(0);
    expect((await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) })).status).toBe(200);

    const erased = await runCli(['dispatch', 'erase', '--id', id, '--wait', '--json'], cliEnv(), 90_000);
    expect(erased.code).toBe(0);
    expect(JSON.parse(erased.stdout)).toMatchObject({ dispatch_id: id, status: 'completed' });
    expect(Object.values(await dispatchFootprint(h.pool, id)).every((n) => n === 0)).toBe(true);
  }, 150_000);
});
