// Erasure on Temporal's side (DESIGN §11 "What erasure removes"): a dispatch's workflow id may have
// several runs (continue-as-new, restarts after a rest in exception); every one holds the
// registration in its input, so each is terminated if open and then deleted.
import type { Client } from '@temporalio/client';

/** Terminates any open run, then deletes EVERY run of the workflow id (continue-as-new, restarts). Returns runs deleted. */
export async function deleteDispatchRuns(_client: Client, _dispatchId: string): Promise<number> {
  throw new Error('not implemented yet');
}

/** How many runs of the dispatch's workflow id Temporal still knows (open or closed). */
export async function countDispatchRuns(_client: Client, _dispatchId: string): Promise<number> {
  throw new Error('not implemented yet');
}
