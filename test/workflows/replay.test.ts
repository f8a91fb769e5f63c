// Determinism: every committed history of the dispatch workflow replays on the current workflow
// code without a non-determinism error. A change to workflow code that would break running
// dispatches fails here; record new histories only together with a versioning plan (patched()).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { requireTestEnv, testLogger } from '../support/env.js';
import { HISTORIES_DIR } from '../support/histories.js';
import { installTemporalRuntime } from '../../worker/runtime.js';

const files = readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json'));

describe('replay of recorded dispatch workflow histories', () => {
  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  it.each(files)('replays %s deterministically', async (file) => {
    installTemporalRuntime(testLogger('replay'), 'WARN');
    const history = historyFromJSON(JSON.parse(readFileSync(`${HISTORIES_DIR}${file}`, 'utf8')));
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: requireTestEnv('TEST_WORKFLOW_BUNDLE') } },
        history,
        file.replace(/\.json$/, ''),
      ),
    ).resolves.toBeUndefined();
  });
});
