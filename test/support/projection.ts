// Test fixture: a projection row written as a dispatch's change writes it (db/dispatch-changes.ts,
// the one writer of dispatches and prediction_log), without a workflow, for tests of what reads it.
import { writeDispatchChange } from '../../db/dispatch-changes.js';
import type { Pool } from '../../db/pool.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';

export interface ProjectionRow {
  id: string;
  issuerId: string;
  mode: 'live' | 'test';
  version: number;
  status: string;
  dispatchDate: string;
  postalCode: string;
  countryCode: string;
  /** Canonical JSON of the registration body. */
  registration: string;
  windowMin: string;
  windowMax: string;
  confidenceLevel: string;
  record: StatusRecord;
}

/** Writes the row's version with no effects and no webhook events; true when it became the current row. */
export async function upsertProjection(pool: Pool, row: ProjectionRow): Promise<boolean> {
  const { written } = await writeDispatchChange(
    pool,
    {
      dispatch: { ...row },
      projection: { ...row },
      effects: [],
      events: [],
      timestamp: new Date().toISOString(),
    },
    `dispatch:${row.id}`,
  );
  return written;
}
