// Tables: erasures (reads dispatches for the owner of a dispatch to erase). The record of each
// erasure (docs/http-contract.md "Erasure"): requested by the API or the operator CLI, driven by the
// erasure workflow (workflows/erasure.ts) to completed or failed, and afterwards the dispatch's
// tombstone, which the registration, status, carrier-event and tracking-link routes consult for an id
// they do not find, to answer that it was erased. db/erasure.ts removes the rows themselves.
import { newId } from './ids.js';
import type { Pool } from './pool.js';

export type ErasureStatus = 'pending' | 'completed' | 'failed';

export interface Erasure {
  id: string;
  dispatchId: string;
  issuerId: string;
  mode: 'live' | 'test';
  status: ErasureStatus;
  requestedAt: Date;
  completedAt: Date | null;
  removed: { rows: number; workflowRuns: number };
}

/** What stays of an erased dispatch: whose it was, and when it was erased (or asked to be). */
export interface Tombstone {
  dispatchId: string;
  issuerId: string;
  mode: 'live' | 'test';
  erasedAt: Date;
}

const COLUMNS = 'id, dispatch_id, issuer_id, mode, status, requested_at, completed_at, removed_rows, removed_workflow_runs';

function toErasure(row: Record<string, unknown>): Erasure {
  return {
    id: row.id as string,
    dispatchId: row.dispatch_id as string,
    issuerId: row.issuer_id as string,
    mode: row.mode as Erasure['mode'],
    status: row.status as ErasureStatus,
    requestedAt: row.requested_at as Date,
    completedAt: (row.completed_at as Date | null) ?? null,
    removed: { rows: row.removed_rows as number, workflowRuns: row.removed_workflow_runs as number },
  };
}

/** How long an erased dispatch's tracking number is recognised (erased_tracking_numbers) after its erasure. */
export const ERASED_NUMBER_KEPT = '30 days';

/** The SHA-256 of a tracking number as matching compares it (SQL, `number` a text expression): how erased_tracking_numbers holds it. */
export const numberHash = (number: string): string => `sha256(convert_to(${number}, 'UTF8'))`;

/**
 * Records the erasure of a dispatch that has a projection (its owner is read from it), or returns
 * the erasure already recorded for it: a second request gets the first. Undefined when the dispatch
 * is neither projected nor erased.
 */
export async function requestErasure(pool: Pool, dispatchId: string): Promise<Erasure | undefined> {
  await requestErasures(pool, [dispatchId]);
  return findErasureOfDispatch(pool, dispatchId);
}

/**
 * Records a pending erasure for each of these dispatches that has a projection and none yet: from
 * here on each is a tombstone (db/dispatches.ts NOT_ERASED; carrier events and registrations for it
 * are refused). In the same statement, the idempotency records whose response holds one's record
 * leave at once (the erasure's rows step deletes them too, and any written since): a registration
 * retried with its Idempotency-Key then reaches the route, which answers 409 "erased" as it will once
 * the erasure completes, instead of replaying the record of a dispatch every other route calls erased.
 * And its tracking number's hash is written now (erased_tracking_numbers; the rows step writes it
 * again, keeping the later expiry), so that a feed's checkpoint naming the dispatch only by that
 * number is ignored from the request on (namesErased), not kept as unmatched and listed meanwhile.
 */
export async function requestErasures(pool: Pool, dispatchIds: readonly string[]): Promise<void> {
  await pool.query(
    `WITH recorded AS (
       INSERT INTO erasures (id, dispatch_id, issuer_id, mode)
       SELECT t.id, d.id, d.issuer_id, d.mode
         FROM unnest($1::text[], $2::uuid[]) AS t(id, dispatch_id) JOIN dispatches d ON d.id = t.dispatch_id
       ON CONFLICT (dispatch_id) DO NOTHING
       RETURNING dispatch_id
     ),
     numbers AS (
       INSERT INTO erased_tracking_numbers (issuer_id, mode, number_hash, expires_at)
       SELECT DISTINCT d.issuer_id, d.mode, ${numberHash('d.tracking_key')}, now() + interval '${ERASED_NUMBER_KEPT}'
         FROM dispatches d WHERE d.id IN (SELECT dispatch_id FROM recorded) AND d.tracking_key IS NOT NULL
       ON CONFLICT (issuer_id, mode, number_hash) DO UPDATE SET expires_at = greatest(erased_tracking_numbers.expires_at, EXCLUDED.expires_at)
     )
     DELETE FROM idempotency_keys WHERE dispatch_ids && (SELECT coalesce(array_agg(dispatch_id), '{}') FROM recorded)`,
    [dispatchIds.map(() => newId('er')), dispatchIds],
  );
}

export async function findErasure(pool: Pool, id: string): Promise<Erasure | undefined> {
  const { rows } = await pool.query(`SELECT ${COLUMNS} FROM erasures WHERE id = $1`, [id]);
  return rows[0] && toErasure(rows[0]);
}

export async function findErasureOfDispatch(pool: Pool, dispatchId: string): Promise<Erasure | undefined> {
  const { rows } = await pool.query(`SELECT ${COLUMNS} FROM erasures WHERE dispatch_id = $1`, [dispatchId]);
  return rows[0] && toErasure(rows[0]);
}

/** The tombstone of an erased dispatch (an erasure requested or done); undefined for any other id. */
export async function findTombstone(pool: Pool, dispatchId: string): Promise<Tombstone | undefined> {
  const { rows } = await pool.query(
    'SELECT dispatch_id, issuer_id, mode, coalesce(completed_at, requested_at) AS erased_at FROM erasures WHERE dispatch_id = $1',
    [dispatchId],
  );
  const row = rows[0];
  return row && { dispatchId: row.dispatch_id, issuerId: row.issuer_id, mode: row.mode, erasedAt: row.erased_at };
}

/**
 * Whether a feed's checkpoint names an erased (or erasing) dispatch of the issuer and mode: one of
 * these ids, or (within 30 days of its erasure) its tracking number, normalised as matching compares
 * it. Such a checkpoint is ignored, not kept.
 */
export async function namesErased(
  pool: Pool,
  named: { dispatchIds: readonly string[]; trackingNumber: string; issuerId: string; mode: string },
): Promise<boolean> {
  const { rows } = await pool.query<{ erased: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM erasures WHERE dispatch_id = ANY ($1::uuid[]) AND issuer_id = $3 AND mode = $4)
         OR EXISTS (SELECT 1 FROM erased_tracking_numbers
                     WHERE issuer_id = $3 AND mode = $4 AND number_hash = ${numberHash('$2::text')} AND expires_at > now()) AS erased`,
    [named.dispatchIds, named.trackingNumber, named.issuerId, named.mode],
  );
  return rows[0]!.erased;
}

/** The erasure workflow's last step: what it removed, and when. A completed erasure stays completed. */
export async function completeErasure(pool: Pool, id: string, removed: { rows: number; workflowRuns: number }): Promise<void> {
  await pool.query(
    `UPDATE erasures SET status = 'completed', completed_at = now(), removed_rows = $2, removed_workflow_runs = $3
      WHERE id = $1 AND status <> 'completed'`,
    [id, removed.rows, removed.workflowRuns],
  );
}

export async function failErasure(pool: Pool, id: string): Promise<void> {
  await pool.query(`UPDATE erasures SET status = 'failed' WHERE id = $1 AND status = 'pending'`, [id]);
}

/**
 * Erasures not completed that were requested over `olderThanMs` ago, `limit` at a time after the id
 * `after`, for the retention sweep to start again: pending ones whose request recorded them and went
 * no further (the API process died, or Temporal was down, before their workflow started), with those
 * whose workflow is running, which starting again leaves alone; and failed ones, whose workflow ran
 * out of retries (Postgres or Temporal down for minutes).
 */
export async function findUnfinishedErasures(
  pool: Pool,
  query: { olderThanMs: number; limit: number; after?: string },
): Promise<Pick<Erasure, 'id' | 'dispatchId' | 'status'>[]> {
  const { rows } = await pool.query<{ id: string; dispatch_id: string; status: ErasureStatus }>(
    `SELECT id, dispatch_id, status FROM erasures
      WHERE status IN ('pending', 'failed') AND requested_at < now() - make_interval(secs => $1::double precision / 1000) AND id > $2
      ORDER BY id LIMIT $3`,
    [query.olderThanMs, query.after ?? '', query.limit],
  );
  return rows.map((row) => ({ id: row.id, dispatchId: row.dispatch_id, status: row.status }));
}

/** A failed erasure asked again goes back to pending (its workflow is started again). */
export async function retryErasure(pool: Pool, id: string): Promise<void> {
  await pool.query(`UPDATE erasures SET status = 'pending' WHERE id = $1 AND status = 'failed'`, [id]);
}

/** Every dispatch of an issuer that still has a projection (both modes), for `issuer erase`. */
export async function issuerDispatchIds(pool: Pool, issuerId: string): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM dispatches WHERE issuer_id = $1 ORDER BY id', [issuerId]);
  return rows.map((r) => r.id);
}
