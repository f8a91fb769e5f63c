// The product's worker for the webhook-latency benchmark, in its own process: what worker/main.ts
// runs (createWorker with its production tuning, a pool of 20, the Temporal runtime's logs routed
// into pino at INFO), except that the log goes to BENCH_LOG_FILE instead of stdout and the
// workflows are bundled from workflows/ at start-up, as in production.
// Env: DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE, WEBHOOK_ALLOW_PRIVATE_NETWORKS=true,
// BENCH_LOG_FILE. Prints `{"ready":true}` once the worker polls.
import { openSync } from 'node:fs';
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';
import { openWorker } from '../../worker/create-worker.js';
import { installTemporalRuntime } from '../../worker/runtime.js';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'info' });
const logger = createLogger({ name: 'worker', level: config.LOG_LEVEL, destination: openSync(process.env.BENCH_LOG_FILE!, 'a') });
installTemporalRuntime(logger);
const { worker, close } = await openWorker(config, { applicationName: 'bench-worker', logger });
const running = worker.run();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
// Worker.run() reacts to SIGTERM itself: it stops polling and lets running tasks finish.
await running;
await close();
logger.flush();
