// The product's worker in a process of its own, for tests that kill it (test/e2e/crash-recovery):
// createWorker as worker/main.ts runs it, on the workflow bundle global-setup built (a restart
// takes a second, not a re-bundle). Env: DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE,
// TEST_WORKFLOW_BUNDLE and any product setting. Prints `worker ready` once it polls.
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';
import { openWorker } from '../../worker/create-worker.js';
import { installTemporalRuntime, sdkLogLevel } from '../../worker/runtime.js';

const config = loadConfig();
const logger = createLogger({ name: 'worker', level: config.LOG_LEVEL, destination: 2 });
// The activities' and workflows' own lines at LOG_LEVEL, as worker/main.ts logs them (test/e2e/retention-*, log-privacy).
installTemporalRuntime(logger, sdkLogLevel(config.LOG_LEVEL));
const { worker, close } = await openWorker(config, {
  applicationName: process.env.TEST_WORKER_NAME ?? 'test-worker-process',
  logger,
  workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
});
const running = worker.run();
process.stdout.write('worker ready\n');
await running;
await close();
