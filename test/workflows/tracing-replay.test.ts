// Tracing's workflow interceptors (workflows/tracing-interceptors.ts, bundled only when
// OTEL_EXPORTER_OTLP_ENDPOINT is set) add headers and spans, never commands: every recorded history
// of the dispatch workflow, recorded without them, replays on a bundle built with them.
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { WORKFLOW_INTERCEPTORS_PATH } from '../../platform/tracing.js';
import { WORKFLOWS_PATH } from '../../worker/create-worker.js';
import { installTemporalRuntime } from '../../worker/runtime.js';
import { testLogger } from '../support/env.js';
import { HISTORIES_DIR } from '../support/histories.js';

const files = readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json'));
let bundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  installTemporalRuntime(testLogger('tracing-replay'), 'WARN');
  bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_PATH],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
  });
}, 120_000);

describe('replay of recorded dispatch workflow histories with the tracing interceptors bundled', () => {
  it('bundles the interceptors module', () => {
    expect(bundle.code).toContain('OpenTelemetryInboundInterceptor');
  });

  it.each(files)('replays %s deterministically', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(`${HISTORIES_DIR}${file}`, 'utf8')));
    await expect(
      Worker.runReplayHistory(
        // The workflow span sink as the worker registers it (platform/tracing.ts); never called on replay.
        { workflowBundle: bundle, sinks: { exporter: { export: { fn: () => {} } } } },
        history,
        file.replace(/\.json$/, ''),
      ),
    ).resolves.toBeUndefined();
  });
});
