// A real worker on a harness's task queue whose predictions are made as of an earlier day: the
// dispatch workflow, its activities and Postgres as in production, only the projection's clock
// (activities/projection.ts `now`) set back. A window predicted at registration always starts today
// or later (domain/prediction.ts notInThePast) and a carrier event may not be dated ahead of now
// (docs/http-contract.md "Input bounds and integrity promises"), so without this no test could
// deliver a card through the service inside or after its registration window. Start the harness
// with `worker: false` so that this is the queue's only worker.
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import { createProjectionActivities } from '../../activities/projection.js';
import { installTemporalRuntime } from '../../worker/runtime.js';
import type { Harness } from './harness.js';
import { requireTestEnv, testLogger } from './env.js';

const DAY_MS = 86_400_000;

export async function startEarlierPredictionsWorker(h: Harness, daysEarlier: number): Promise<{ stop(): Promise<void> }> {
  installTemporalRuntime(testLogger('temporal'), 'WARN');
  const connection = await NativeConnection.connect({ address: h.config.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    namespace: h.config.TEMPORAL_NAMESPACE,
    taskQueue: h.taskQueue,
    workflowBundle: { codePath: requireTestEnv('TEST_WORKFLOW_BUNDLE') },
    activities: {
      ...createActivities({ pool: h.pool, config: h.config, temporal: h.temporal }),
      ...createProjectionActivities({ pool: h.pool, now: () => new Date(Date.now() - daysEarlier * DAY_MS) }),
    },
  });
  const run = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await run;
      await connection.close();
    },
  };
}
