// Erasure on Temporal's side (docs/http-contract.md "Erasure"): a
// dispatch's workflow id may have several runs (continue-as-new, restarts after a rest in exception),
// and every one holds the registration in its input and the carrier events in its signals. Each run
// is found by a visibility query on the workflow id and deleted (DeleteWorkflowExecution per run,
// which terminates an open run first). Deletion is asynchronous in Temporal: deleteDispatchRuns waits
// until no run is left in Temporal's store, so a count taken after an erasure reads 0.
import { isGrpcServiceError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { TEMPORAL_DEADLINE_MS } from './client.js';

const GRPC_NOT_FOUND = 5;
/** How long a deletion may take before the erasure is retried (its activity's retry). */
const DELETION_WAIT_MS = 60_000;
const POLL_MS = 250;

/** Deletes EVERY run of the workflow id (continue-as-new, restarts), an open one terminated by the deletion. Returns runs deleted. */
export async function deleteDispatchRuns(client: Client, dispatchId: string): Promise<number> {
  const deleted = new Set<string>();
  const deadline = Date.now() + DELETION_WAIT_MS;
  for (;;) {
    const runs = await knownRuns(client, dispatchId);
    if (runs.length === 0) return deleted.size;
    if (Date.now() > deadline) throw new Error(`workflow ${dispatchId}: ${runs.length} run(s) still there after deletion`);
    for (const run of runs.filter((r) => !deleted.has(r.runId))) {
      // An open run is terminated by the deletion itself, at once; terminating it first would make
      // Temporal hold the deletion of a just-closed run for its close to reach visibility (~20 s).
      await ignoreNotFound(() =>
        client.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () =>
          client.workflowService.deleteWorkflowExecution({
            namespace: client.options.namespace,
            workflowExecution: { workflowId: dispatchId, runId: run.runId },
          }),
        ),
      );
      deleted.add(run.runId);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Temporal deletions in flight at once: enough to hide round trips, few enough to spare the frontend. */
const DELETIONS_AT_ONCE = 16;

/** `deleteDispatchRuns` for each of these dispatches, DELETIONS_AT_ONCE at a time (the retention sweep's and `issuer erase`'s batches). */
export async function deleteRunsOfDispatches(client: Client, dispatchIds: readonly string[]): Promise<void> {
  await eachAtOnce(dispatchIds, (id) => deleteDispatchRuns(client, id));
}

/**
 * The last sweep of a batch whose rows (and tombstones) are written: the runs of these dispatches
 * that the store still holds, found by describing each workflow id rather than by visibility, are
 * deleted. Catches the run a carrier event's restart started between the batch's first deletion and
 * its rows' erasure, too new for visibility to list; a restart after the tombstones deletes its own
 * run (ingest/carrier-events.ts).
 */
export async function deleteLateRuns(client: Client, dispatchIds: readonly string[]): Promise<void> {
  await eachAtOnce(dispatchIds, async (id) => {
    if (await stored(client.workflow.getHandle(id).describe())) await deleteDispatchRuns(client, id);
  });
}

async function eachAtOnce(ids: readonly string[], step: (id: string) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < ids.length) await step(ids[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(DELETIONS_AT_ONCE, ids.length) }, lane));
}

/** How many runs of the dispatch's workflow id Temporal still knows (open or closed). */
export async function countDispatchRuns(client: Client, dispatchId: string): Promise<number> {
  return (await knownRuns(client, dispatchId)).length;
}

/**
 * The runs visibility lists that Temporal's own store still holds, and the workflow id's latest run
 * as the store describes it. Visibility forgets a deleted run later than the store does (seconds on
 * the dev server): a listed run that describes as NotFound is gone. It also learns of a new run
 * later (a second or so on Elasticsearch): a run just started, by a carrier event's restart racing
 * the erasure, is found by the describe of the workflow id, which reads the store.
 */
async function knownRuns(client: Client, workflowId: string): Promise<Array<Pick<WorkflowExecutionInfo, 'runId'>>> {
  const [listed, latest] = await Promise.all([listRuns(client, workflowId), stored(client.workflow.getHandle(workflowId).describe())]);
  const held = await Promise.all(listed.map((run) => stored(client.workflow.getHandle(workflowId, run.runId).describe())));
  const runs: Array<Pick<WorkflowExecutionInfo, 'runId'>> = listed.filter((_, i) => held[i]);
  if (latest && !runs.some((run) => run.runId === latest.runId)) runs.push(latest);
  return runs;
}

/** What the store answers, or undefined when it holds no such run. */
async function stored<T>(describe: Promise<T>): Promise<T | undefined> {
  try {
    return await describe;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

async function listRuns(client: Client, workflowId: string): Promise<WorkflowExecutionInfo[]> {
  // The id is a UUID (checked at every edge), so it cannot break out of the quoted literal.
  if (!/^[0-9a-fA-F-]{36}$/.test(workflowId)) throw new Error('a dispatch id is a UUID');
  const runs: WorkflowExecutionInfo[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(run);
  return runs;
}

async function ignoreNotFound(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
}

function isNotFound(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 10; current = (current as { cause?: unknown }).cause, depth++) {
    if ((current as Error).name === 'WorkflowNotFoundError') return true;
    if (isGrpcServiceError(current) && current.code === GRPC_NOT_FOUND) return true;
  }
  return false;
}
