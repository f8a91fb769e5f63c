// The chart and docker-compose cap the worker's V8 heaps with NODE_OPTIONS=--max-old-space-size
// (docs/maintenance.md "Scaling and tuning"). The cap is meant for both of the worker's isolates:
// its main thread and the Temporal SDK's workflow thread, a worker_threads Worker that the SDK
// creates without resourceLimits. This checks that such a thread inherits the cap.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';

const SCRIPT = `
const { Worker } = require('node:worker_threads');
const v8 = require('node:v8');
const mib = (bytes) => Math.round(bytes / 1048576);
const thread = new Worker("require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)", { eval: true });
thread.once('message', (limit) => {
  console.log(JSON.stringify({ main: mib(v8.getHeapStatistics().heap_size_limit), thread: mib(limit) }));
  thread.terminate();
});
`;

function heapLimits(nodeOptions: string | undefined): { main: number; thread: number } {
  const env = { PATH: process.env.PATH ?? '', ...(nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions }) };
  return JSON.parse(execFileSync(process.execPath, ['-e', SCRIPT], { env, encoding: 'utf8' })) as { main: number; thread: number };
}

describe("the worker's heap cap", () => {
  it('reaches a worker thread created without resourceLimits, as the SDK creates its workflow thread', () => {
    const capped = heapLimits('--max-old-space-size=320');
    // heap_size_limit is the old-space cap plus V8's young generation (192 MiB on Node 24).
    expect(capped.thread).toBe(capped.main);
    expect(capped.main).toBeGreaterThanOrEqual(320);
    expect(capped.main).toBeLessThan(320 + 256);
    // Without it both isolates are sized from the host's memory (several GiB on a test machine).
    const uncapped = heapLimits(undefined);
    expect(uncapped.thread).toBeGreaterThan(capped.thread);
  });
});
