// Erasing one dispatch on request (docs/http-contract.md "Erasure"), shared by DELETE /v1/dispatches/{id}
// and the operator CLI's `dispatch erase` / `issuer erase`: the erasure is recorded first (from then
// on the id is a tombstone: registrations, status reads and carrier events for it are refused), then
// its workflow (workflows/erasure.ts) is started, which removes the dispatch from Temporal and
// Postgres. Asked again, the same erasure is answered; a failed one is started again.
//
// `issuer erase` takes every dispatch of an issuer: a workflow per dispatch, each waiting for the
// activities of its runs, took 10 s a dispatch, 8 at a time (a day and a half for 100,000), so it
// erases them in batches instead (`eraseAtOnce`), as the retention sweep does.
import type { Client } from '@temporalio/client';
import { eraseDispatchRows } from '../db/erasure.js';
import { requestErasure, requestErasures, retryErasure, type Erasure } from '../db/erasure-records.js';
import type { Pool } from '../db/pool.js';
import { dispatchRunStates, startErasure } from '../temporal/client.js';
import { deleteLateRuns, deleteRunsOfDispatches } from '../temporal/erasure.js';

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
  const erasure = await requestErasure(deps.pool, dispatchId);
  if (!erasure) return undefined;
  if (erasure.status === 'completed') return erasure;
  if (erasure.status === 'failed') await retryErasure(deps.pool, erasure.id);
  await driveErasure(deps, erasure);
  return erasure.status === 'failed' ? { ...erasure, status: 'pending' } : erasure;
}

/**
 * Starts the workflow of a recorded erasure, unless it runs or has completed already (one workflow
 * per erasure id): whether it started it. Also the retention sweep's, for an erasure whose request
 * went no further.
 */
export async function driveErasure(deps: Omit<ErasureDeps, 'pool'>, erasure: Pick<Erasure, 'id' | 'dispatchId'>): Promise<boolean> {
  return startErasure(deps.temporal, deps.taskQueue, {
    erasureId: erasure.id,
    dispatchId: erasure.dispatchId,
    settleMs: deps.webhookTimeoutMs + SETTLE_MARGIN_MS,
  });
}

/** What every answer about an erased dispatch says (a 404's message). */
export function erasedMessage(dispatchId: string, erasedAt: Date): string {
  return `dispatch ${dispatchId} was erased on ${erasedAt.toISOString()}; nothing about it is kept`;
}

/** Dispatches per batch of `eraseAtOnce`: one statement of tombstones, one visibility query, one transaction of rows. */
export const ERASURE_BATCH_SIZE = 200;

/**
 * Erases these dispatches without a workflow each, `ERASURE_BATCH_SIZE` at a time: the batch's
 * erasures are recorded first (tombstones: from then on nothing reads, registers or restarts them),
 * then every Temporal run of each is deleted (an open one terminated); once the activities of the
 * runs that were open had WEBHOOK_TIMEOUT_MS + 5 s to end, all their rows leave in one transaction that
 * completes their erasures, and a second look at Temporal (each workflow id described, not listed)
 * deletes a run its visibility had not listed yet. The next batches' runs are deleted during that wait, so it is waited once, not once a batch.
 * Idempotent: run again after a crash, it finishes what was left (and the retention sweep starts the
 * workflow of an erasure left pending). Returns how many dispatches it erased.
 */
export async function eraseAtOnce(deps: ErasureDeps, dispatchIds: readonly string[], onBatch?: (erased: number) => void): Promise<number> {
  let erased = 0;
  const settling: Array<{ batch: readonly string[]; readyAt: number }> = [];
  const finish = async ({ batch, readyAt }: (typeof settling)[number]) => {
    const wait = readyAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await eraseDispatchRows(deps.pool, batch, { completeRequested: true });
    await deleteLateRuns(deps.temporal, batch);
    erased += batch.length;
    onBatch?.(erased);
  };
  for (let i = 0; i < dispatchIds.length; i += ERASURE_BATCH_SIZE) {
    const batch = dispatchIds.slice(i, i + ERASURE_BATCH_SIZE);
    await requestErasures(deps.pool, batch);
    const runs = await dispatchRunStates(deps.temporal, batch);
    await deleteRunsOfDispatches(deps.temporal, [...runs.keys()]);
    const open = [...runs.values()].includes('running');
    settling.push({ batch, readyAt: Date.now() + (open ? deps.webhookTimeoutMs + SETTLE_MARGIN_MS : 0) });
    while (settling.length > 0 && settling[0].readyAt <= Date.now()) await finish(settling.shift()!);
  }
  for (const waiting of settling.splice(0)) await finish(waiting);
  return erased;
}
