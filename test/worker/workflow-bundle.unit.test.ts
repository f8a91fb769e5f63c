// The worker's workflow bundle, built in a child process (worker/workflow-bundle.ts) so that the
// bundler's memory leaves with it: the bundle holds the dispatch workflow (and, when tracing is on,
// its interceptors), the file is gone once disposed, and a bundle that cannot be built fails with
// the bundler's own reason. That a worker process runs from it end to end is shown by
// test/e2e/entry-points.test.ts (worker/main.ts, which bundles this way).
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { WORKFLOW_INTERCEPTORS_PATH } from '../../platform/tracing.js';
import { bundleWorkflowsInChildProcess } from '../../worker/workflow-bundle.js';

describe('bundleWorkflowsInChildProcess', () => {
  it('writes a bundle with every workflow the worker registers, and removes it on dispose', async () => {
    const bundle = await bundleWorkflowsInChildProcess();
    const code = readFileSync(bundle.codePath, 'utf8');
    for (const name of [
      'dispatchWorkflow',
      'erasureWorkflow',
      'predictionRefreshWorkflow',
      'redeliveryWorkflow',
      'reconcileDeliveriesWorkflow',
      'retentionWorkflow',
    ])
      expect(code).toContain(name);
    expect(code).not.toContain('OpenTelemetryInboundInterceptor');
    await bundle.dispose();
    expect(existsSync(bundle.codePath)).toBe(false);
  }, 120_000);

  it('puts the given workflow interceptor modules (tracing) into the bundle', async () => {
    const bundle = await bundleWorkflowsInChildProcess([WORKFLOW_INTERCEPTORS_PATH]);
    try {
      expect(readFileSync(bundle.codePath, 'utf8')).toContain('OpenTelemetryInboundInterceptor');
    } finally {
      await bundle.dispose();
    }
  }, 120_000);

  it('fails with the bundler’s reason when the bundle cannot be built', async () => {
    const missing = '/nonexistent/interceptors-module.ts';
    await expect(bundleWorkflowsInChildProcess([missing])).rejects.toThrow(/bundling the workflows failed: .*interceptors-module/s);
  }, 120_000);
});
