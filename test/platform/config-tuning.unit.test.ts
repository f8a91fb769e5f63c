// Worker and Postgres pool tuning (docs/maintenance.md "Scaling and tuning"): cache size, task slots,
// pollers, the sticky queue's timeout and the pool sizes are configuration, read and checked once
// at start-up, and handed to the Temporal worker as its options.
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../platform/config.js';
import { workerTuning } from '../../worker/create-worker.js';

describe('worker and pool tuning', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      WORKER_MAX_CACHED_WORKFLOWS: 1000,
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: 100,
      WORKER_MAX_CONCURRENT_ACTIVITIES: 200,
      WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: 100,
      WORKER_WORKFLOW_TASK_POLLERS: 10,
      WORKER_ACTIVITY_TASK_POLLERS: 10,
      WORKER_NONSTICKY_POLL_RATIO: 0.2,
      WORKER_STICKY_QUEUE_TIMEOUT: 10_000,
      WORKER_WORKFLOW_THREADS: 1,
      WORKER_DATABASE_POOL_MAX: 20,
      DATABASE_POOL_MAX: 10,
    });
  });

  it('reads every value from the environment and hands the worker options to the SDK', () => {
    const config = loadConfig({
      WORKER_MAX_CACHED_WORKFLOWS: '5000',
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '50',
      WORKER_MAX_CONCURRENT_ACTIVITIES: '300',
      WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '40',
      WORKER_WORKFLOW_TASK_POLLERS: '4',
      WORKER_ACTIVITY_TASK_POLLERS: '3',
      WORKER_NONSTICKY_POLL_RATIO: '0.5',
      WORKER_STICKY_QUEUE_TIMEOUT: '2s',
      WORKER_WORKFLOW_THREADS: '2',
      WORKER_DATABASE_POOL_MAX: '30',
      DATABASE_POOL_MAX: '15',
    });
    expect(config.WORKER_DATABASE_POOL_MAX).toBe(30);
    expect(config.DATABASE_POOL_MAX).toBe(15);
    expect(workerTuning(config)).toEqual({
      maxCachedWorkflows: 5000,
      maxConcurrentWorkflowTaskExecutions: 50,
      maxConcurrentActivityTaskExecutions: 300,
      maxConcurrentLocalActivityExecutions: 40,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 4 },
      activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 3 },
      nonStickyToStickyPollRatio: 0.5,
      stickyQueueScheduleToStartTimeout: 2000,
      workflowThreadPoolSize: 2,
    });
  });

  it('takes a cache of 0 (no cache, no sticky queue)', () => {
    expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' }).WORKER_MAX_CACHED_WORKFLOWS).toBe(0);
  });

  it.each([
    ['WORKER_MAX_CACHED_WORKFLOWS', '1'],
    ['WORKER_MAX_CACHED_WORKFLOWS', '-5'],
    ['WORKER_MAX_CACHED_WORKFLOWS', 'many'],
    ['WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', '1'],
    ['WORKER_MAX_CONCURRENT_ACTIVITIES', '0'],
    ['WORKER_MAX_CONCURRENT_ACTIVITIES', '2.5'],
    ['WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES', '0'],
    ['WORKER_WORKFLOW_TASK_POLLERS', '1'],
    ['WORKER_ACTIVITY_TASK_POLLERS', '0'],
    ['WORKER_NONSTICKY_POLL_RATIO', '0'],
    ['WORKER_NONSTICKY_POLL_RATIO', '1.5'],
    ['WORKER_STICKY_QUEUE_TIMEOUT', '10'],
    ['WORKER_WORKFLOW_THREADS', '0'],
    ['WORKER_DATABASE_POOL_MAX', '0'],
    ['DATABASE_POOL_MAX', '0'],
    ['DATABASE_POOL_MAX', 'ten'],
  ])('stops start-up on %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}:`));
  });

  it('refuses more concurrent workflow tasks than cached workflows', () => {
    expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '50', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '100' })).toThrow(
      /WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: must not exceed WORKER_MAX_CACHED_WORKFLOWS \(50\)/,
    );
    expect(
      loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '100' }).WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    ).toBe(100);
  });
});
