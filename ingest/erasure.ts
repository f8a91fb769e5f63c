// Erasing one dispatch on request (docs/http-contract.md "Erasure"), shared by DELETE /v1/dispatches/{id}
// and the operator CLI's `dispatch erase` / `issuer erase`: the erasure is recorded first (from then
// on the id is a tombstone: registrations, status reads and carrier events for it are refused), then
// its workflow (workflows/erasure.ts) is started, which removes the dispatch from Temporal and
// Postgres. Asked again, the same erasure is answered; a failed one is started again.
import type { Client } from '@temporalio/client';
import { requestErasure, retryErasure, type Erasure } from '../db/erasure-records.js';
import type { Pool } from '../db/pool.js';
import { startErasure } from '../temporal/client.js';

export interface ErasureDeps {
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  /** WEBHOOK_TIMEOUT_MS: an attempt already on the wire when the runs are terminated ends within it. */
  webhookTimeoutMs: number;
}

/** The margin, beyond the webhook timeout, for an in-flight activity to record what it did. */
const SETTLE_MARGIN_MS = 5_000;

/** Records (or finds) the erasure of a projected dispatch and makes sure its workflow runs; undefined when the id is unknown. */
export async function eraseDispatch(deps: ErasureDeps, dispatchId: string): Promise<Erasure | undefined> {
  const requested = await requestErasure(deps.pool, dispatchId);
  if (!requested) return undefined;
  const { erasure } = requested;
  if (erasure.status === 'completed') return erasure;
  if (erasure.status === 'failed') await retryErasure(deps.pool, erasure.id);
  await driveErasure(deps, erasure);
  return erasure.status === 'failed' ? { ...erasure, status: 'pending' } : erasure;
}

/**
 * Starts the workflow of a recorded erasure, unless it runs or has completed already (one workflow
 * per erasure id). Also the retention sweep's, for an erasure whose request went no further.
 */
export async function driveErasure(deps: Omit<ErasureDeps, 'pool'>, erasure: Pick<Erasure, 'id' | 'dispatchId'>): Promise<void> {
  await startErasure(deps.temporal, deps.taskQueue, {
    erasureId: erasure.id,
    dispatchId: erasure.dispatchId,
    settleMs: deps.webhookTimeoutMs + SETTLE_MARGIN_MS,
  });
}

/** What every answer about an erased dispatch says (a 404's message). */
export function erasedMessage(dispatchId: string, erasedAt: Date): string {
  return `dispatch ${dispatchId} was erased on ${erasedAt.toISOString()}; nothing about it is kept`;
}
