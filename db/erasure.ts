// Tables: every table that names a dispatch (ERASED_TABLES below), erasures (the tombstone), and
// transit_history (its dispatch_id set to NULL). The erasure of dispatches (docs/privacy.md, DESIGN
// §11 "What erasure removes"): each dispatch's rows leave in one transaction, and only its tombstone
// stays, so the id is never registered again. Temporal's runs are temporal/erasure.ts's part.
import type { Pool } from './pool.js';

/**
 * Erases every Postgres row that names these dispatches, in one transaction per dispatch, leaving the
 * tombstone (id, issuer, mode, erased_at) and unlinking transit history (dispatch id set to NULL).
 * Idempotent: a dispatch already erased counts 0 rows.
 */
export async function eraseDispatchRows(_pool: Pool, _dispatchIds: readonly string[]): Promise<{ rows: number }> {
  throw new Error('not implemented yet');
}

/** Per table (and 'temporal_runs' filled by the caller), how many rows still name the dispatch. */
export async function dispatchFootprint(_pool: Pool, _dispatchId: string): Promise<Record<string, number>> {
  throw new Error('not implemented yet');
}
