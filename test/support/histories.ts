// Recording of workflow histories for the replay (determinism) test. `RECORD_HISTORIES=1 npm test --
// test/workflows/dispatch.test.ts` refreshes the committed files under test/workflows/histories/.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';

export const HISTORIES_DIR = fileURLToPath(new URL('../workflows/histories/', import.meta.url));

export async function maybeRecordHistory(handle: WorkflowHandle, name: string): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const history = await handle.fetchHistory();
  writeFileSync(`${HISTORIES_DIR}${name}.json`, `${historyToJSON(history)}\n`);
}
