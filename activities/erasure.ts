// The erasure workflow's activities (workflows/erasure.ts): the building blocks of db/erasure.ts and
// temporal/erasure.ts, and the erasure's record (db/erasure-records.ts).
import type { Client } from '@temporalio/client';
import { completeErasure, failErasure } from '../db/erasure-records.js';
import { eraseDispatchRows } from '../db/erasure.js';
import type { Pool } from '../db/pool.js';
import { deleteDispatchRuns } from '../temporal/erasure.js';
import type { ErasureSummary } from '../temporal/contract.js';

export function createErasureActivities(deps: { pool: Pool; temporal: Client }) {
  return {
    /** Terminates and deletes every run of the dispatch's workflow id; how many were deleted. */
    eraseWorkflowRuns(dispatchId: string): Promise<number> {
      return deleteDispatchRuns(deps.temporal, dispatchId);
    },
    /** Removes every row naming the dispatches, in one transaction. */
    eraseRows(dispatchIds: string[]): Promise<{ rows: number }> {
      return eraseDispatchRows(deps.pool, dispatchIds);
    },
    recordErasure(erasureId: string, removed: ErasureSummary): Promise<void> {
      return completeErasure(deps.pool, erasureId, removed);
    },
    recordErasureFailed(erasureId: string): Promise<void> {
      return failErasure(deps.pool, erasureId);
    },
  };
}
