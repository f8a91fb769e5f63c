// The minimal workflow's worker, in its own process: the same worker tuning as
// worker/create-worker.ts (cache 2000 as the benchmark runs the product's worker, 200 activities, 100 workflow tasks at once) and the same
// logging set-up as the product's worker, with one activity that POSTs a fixed body of the size
// of a real webhook to the receiver — on a fresh connection, as the product's delivery does — and
// an empty `firstActivity` for the signals that ask for the dispatch workflow's shape.
// Env: TEMPORAL_ADDRESS, BENCH_TASK_QUEUE, BENCH_RECEIVER_URL, BENCH_BODY_BYTES, BENCH_LOG_FILE.
// Prints `{"ready":true}` once the worker polls.
import { openSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createLogger } from '../../platform/logger.js';
import { installTemporalRuntime } from '../../worker/runtime.js';

const url = new URL(process.env.BENCH_RECEIVER_URL!);
const body = Buffer.from(
  JSON.stringify({ event: 'minimal', padding: 'x'.repeat(Math.max(0, Number(process.env.BENCH_BODY_BYTES ?? 700) - 30)) }),
);

function postFixedBody(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length), 'x-bench-minimal': '1' },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

// Stands in for writeProjection in the dispatch workflow's shape: nothing but its scheduling cost.
async function firstActivity(): Promise<void> {}

const activities = { postFixedBody, firstActivity };
export type MinimalActivities = typeof activities;

const logger = createLogger({ name: 'minimal-worker', level: 'info', destination: openSync(process.env.BENCH_LOG_FILE!, 'a') });
installTemporalRuntime(logger);
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const worker = await Worker.create({
  connection,
  taskQueue: process.env.BENCH_TASK_QUEUE!,
  workflowsPath: fileURLToPath(new URL('./minimal-workflow.ts', import.meta.url)),
  activities,
  maxCachedWorkflows: 2000,
  maxConcurrentActivityTaskExecutions: 200,
  maxConcurrentWorkflowTaskExecutions: 100,
  shutdownGraceTime: '10 seconds',
});
const running = worker.run();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
await running;
await connection.close();
logger.flush();
