// The product's worker for the webhook-latency benchmark, in its own process: what worker/main.ts
// runs (createWorker with its production tuning, a pool of 20, the Temporal runtime's logs routed
// into pino at INFO), except that the log goes to BENCH_LOG_FILE instead of stdout and the
// workflows are bundled from workflows/ at start-up, as in production.
// Env: DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE, WEBHOOK_ALLOW_PRIVATE_NETWORKS=true,
// BENCH_LOG_FILE. Prints `{"ready":true}` once the worker polls.
import { createWriteStream, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import v8 from 'node:v8';
import type { Worker as Thread } from 'node:worker_threads';
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';
import { openWorker } from '../../worker/create-worker.js';
import type { WorkerMemoryReport } from './report.js';
import { installTemporalRuntime } from '../../worker/runtime.js';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'info' });
const logger = createLogger({ name: 'worker', level: config.LOG_LEVEL, destination: openSync(process.env.BENCH_LOG_FILE!, 'a') });
installTemporalRuntime(logger);
const { worker, close } = await openWorker(config, { applicationName: 'bench-worker', logger });
const running = worker.run();
// Diagnostics (bench/scale README "Where the memory goes"): on SIGWINCH the worker prints one JSON
// line `{"memory": …}` (resident memory, the V8 heaps of the main thread and of the SDK's workflow
// thread(s)) and, with BENCH_HEAP_SNAPSHOT_DIR=dir, heap snapshots of each thread
// there (open them in Chrome DevTools). The workflow threads are reached through the SDK's
// internals: diagnostics only. Not SIGUSR1 (Node's inspector) nor SIGUSR2 (one of the Temporal
// runtime's shutdown signals, with SIGINT, SIGTERM and SIGQUIT: it would drain the worker).
process.on('SIGWINCH', () => void reportMemory(process.env.BENCH_HEAP_SNAPSHOT_DIR));
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
// Worker.run() reacts to SIGTERM itself: it stops polling and lets running tasks finish.
await running;
await close();
logger.flush();

function workflowThreads(): Thread[] {
  const creator = (worker as unknown as { workflowCreator?: { workerThreadClients?: Array<{ workerThread: Thread }> } }).workflowCreator;
  return (creator?.workerThreadClients ?? []).map((client) => client.workerThread);
}

async function reportMemory(snapshotDir: string | undefined): Promise<void> {
  const mib = (bytes: number) => Math.round(bytes / 1048576);
  const heap = (stats: v8.HeapInfo) => ({
    usedMiB: mib(stats.used_heap_size),
    totalMiB: mib(stats.total_heap_size),
    mallocedMiB: mib(stats.malloced_memory),
    limitMiB: mib(stats.heap_size_limit),
  });
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => Math.round(Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) / 1024);
  const report: WorkerMemoryReport = {
    rssMiB: field('VmRSS'),
    peakMiB: field('VmHWM'),
    externalMiB: mib(process.memoryUsage().external),
    arrayBuffersMiB: mib(process.memoryUsage().arrayBuffers),
    mainHeap: heap(v8.getHeapStatistics()),
    workflowThreadHeaps: await Promise.all(workflowThreads().map(async (thread) => heap(await thread.getHeapStatistics()))),
    heapSnapshots: [],
  };
  if (snapshotDir) {
    report.heapSnapshots.push(v8.writeHeapSnapshot(path.join(snapshotDir, `worker-main-${process.pid}.heapsnapshot`)));
    for (const [i, thread] of workflowThreads().entries()) {
      const file = path.join(snapshotDir, `worker-workflow-thread-${i}-${process.pid}.heapsnapshot`);
      await pipeline(await thread.getHeapSnapshot(), createWriteStream(file));
      report.heapSnapshots.push(file);
    }
  }
  process.stdout.write(`${JSON.stringify({ memory: report })}\n`);
}
