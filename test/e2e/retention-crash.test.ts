// A retention sweep cut by a crash (docs/privacy.md "How the windows are applied"): the worker is
// killed with SIGKILL while `retention run` is erasing completed dispatches in small batches. No
// dispatch is left half-erased (each is either whole, every row in place, or gone with only its
// tombstone), and running it again completes the erasure.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { dispatchFootprint } from '../../db/erasure.js';
import { ROWS_PER_DISPATCH, seedCompletedDispatches } from '../../bench/retention/seed.js';
import { RETENTION_WORKFLOW_TYPE } from '../../temporal/contract.js';
import { startRetentionService, type RetentionService } from '../support/retention-service.js';
import { until } from '../support/until.js';

const COUNT = 400;
let s: RetentionService;
let ids: string[];

beforeAll(async () => {
  s = await startRetentionService('retention_crash', {
    RETENTION_DISPATCH: '1s',
    DELIVERED_RETENTION: '1s',
    RETENTION_WEBHOOK_PAYLOAD: 'never',
    RETENTION_TRANSIT_HISTORY: 'never',
  });
  const issuerId = await s.h.createIssuer();
  const endpoint = await createWebhookEndpoint(s.h.pool, { issuerId, url: 'https://example.com/hooks', events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(endpoint.reason);
  ids = await seedCompletedDispatches(s.h.pool, { issuerId, endpointId: endpoint.endpoint.id, count: COUNT, lastChangeAgoMs: 60_000 });
  await s.startWorker();
}, 120_000);

afterAll(async () => {
  // The first sweep's activity would be retried once its heartbeat times out: end it.
  if (s) {
    for await (const run of s.h.temporal.workflow.list({
      query: `WorkflowType = '${RETENTION_WORKFLOW_TYPE}' AND TaskQueue = '${s.h.taskQueue}' AND ExecutionStatus = 'Running'`,
    })) {
      await s.h.temporal.workflow
        .getHandle(run.workflowId, run.runId)
        .terminate('test over')
        .catch(() => {});
    }
  }
  await s?.stop();
});

/** For each seeded dispatch: `whole` (every seeded row in place), `erased` (none left, a tombstone) or `partial`. */
async function states(): Promise<Record<'whole' | 'erased' | 'partial', number>> {
  const tally = { whole: 0, erased: 0, partial: 0 };
  for (const id of ids) {
    const footprint: Record<string, number> = await dispatchFootprint(s.h.pool, id);
    const seen = Object.fromEntries(Object.keys(ROWS_PER_DISPATCH).map((table) => [table, footprint[table]]));
    const tombstone = await s.h.pool.query('SELECT 1 FROM erasures WHERE dispatch_id = $1', [id]);
    if (Object.values(footprint).every((n) => n === 0) && tombstone.rowCount === 1) tally.erased += 1;
    else if (JSON.stringify(seen) === JSON.stringify(ROWS_PER_DISPATCH) && tombstone.rowCount === 0) tally.whole += 1;
    else tally.partial += 1;
  }
  return tally;
}

describe('a retention sweep killed in the middle of a batch', () => {
  let afterCrash: Record<'whole' | 'erased' | 'partial', number>;

  it('leaves every dispatch whole or erased, none half-erased', async () => {
    const first = s.cli(['retention', 'run', '--batch-size', '20'], 60_000);
    // The first batches are done: the next one is under way when the worker dies.
    const batchLogged = () =>
      s
        .worker()!
        .output()
        .split('\n')
        .some((line) => line.includes('"msg":"retention batch"') && line.includes('"kind":"dispatch"'));
    await until(batchLogged, 'a first batch of erasures', 60_000).catch((error: Error) => {
      throw new Error(`${error.message}; the worker wrote:\n${s.worker()!.output().slice(-4000)}`);
    });
    await s.killWorker();
    afterCrash = await states();
    expect(afterCrash.partial).toBe(0);
    expect(afterCrash.erased).toBeGreaterThan(0);
    expect(afterCrash.whole).toBeGreaterThan(0);
    expect(afterCrash.erased + afterCrash.whole).toBe(COUNT);
    void first.catch(() => {});
  }, 120_000);

  it('completes the erasure when run again', async () => {
    await s.startWorker();
    const again = await s.cli(['retention', 'run']);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ erased_dispatches: afterCrash.whole });
    expect(await states()).toEqual({ whole: 0, erased: COUNT, partial: 0 });
  }, 120_000);
});
