// The one Temporal client every caller uses (API, dashboard, operator CLI, activities, tests): each
// call of the contract (temporal/contract.ts) written once, with its id reuse policy and its
// deadline. Temporal unreachable, too slow to answer, or without TEMPORAL_NAMESPACE, is thrown as
// TemporalUnavailable (the API answers it with 503 service_unavailable, api/errors.ts); a workflow
// that has closed is a result, never an error.
import { randomUUID } from 'node:crypto';
import {
  Client,
  isGrpcDeadlineError,
  isGrpcServiceError,
  NamespaceNotFoundError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type ClientOptions,
  type WorkflowExecutionStatusName,
  type WorkflowHandle,
} from '@temporalio/client';
import type { Config } from '../platform/config.js';
import { temporalClientInterceptors } from '../platform/tracing.js';
import {
  carrierEventSignal,
  carrierEventsSignal,
  DISPATCH_WORKFLOW_TYPE,
  ERASURE_WORKFLOW_TYPE,
  erasureWorkflowId,
  predictionRefreshSignal,
  REDELIVERY_WORKFLOW_TYPE,
  RETENTION_WORKFLOW_TYPE,
  registerUpdate,
  snapshotQuery,
  type CarrierEventInput,
  type DeliveryKey,
  type DispatchRegistration,
  type DispatchSnapshot,
  type DispatchWorkflowInput,
  type ErasureInput,
  type ErasureSummary,
  type PredictionRefreshRequest,
  type RedeliveryInput,
  type RedeliverySummary,
  type RegisterOutcome,
  type RetentionSummary,
  type ServiceCarrierEventInput,
} from './contract.js';
import type { ReplayFilterInput } from '../domain/webhook-event-schemas.js';

/**
 * A Temporal Client for the service's processes: with tracing on (platform/tracing.ts, started
 * before) it carries the OpenTelemetry client interceptor, so a signal or update continues the
 * caller's trace into the workflow.
 */
export function createTemporalClient(options: ClientOptions): Client {
  const interceptors = temporalClientInterceptors();
  return new Client(interceptors ? { ...options, interceptors } : options);
}

/** The dispatch workflow's options from the configuration: how long a resting card stays open. */
export function dispatchWorkflowOptions(
  config: Pick<Config, 'DELIVERED_RETENTION' | 'EXCEPTION_RETENTION'>,
): DispatchWorkflowInput['options'] {
  return { deliveredRetentionMs: config.DELIVERED_RETENTION, exceptionRetentionMs: config.EXCEPTION_RETENTION };
}

/** How long a call may wait on Temporal before it gives up with TemporalUnavailable. */
export const TEMPORAL_DEADLINE_MS = 10_000;
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;
/** Temporal refused the process's credentials (TEMPORAL_API_KEY, the mTLS certificate): an operator's fix, so unavailable too, not a 500. */
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;
const UNAVAILABLE_CODES = new Set([GRPC_UNAVAILABLE, GRPC_DEADLINE_EXCEEDED, GRPC_PERMISSION_DENIED, GRPC_UNAUTHENTICATED]);

/** Temporal could not be reached, or did not answer within the deadline: worth retrying shortly. */
export class TemporalUnavailable extends Error {
  constructor(options?: { cause?: unknown }) {
    super('the workflow service is unavailable; retry shortly', options);
    this.name = 'TemporalUnavailable';
  }
}

export type RegisterResult = RegisterOutcome | { outcome: 'closed' };

/** A redelivery run as its starters see it. */
type RedeliveryWorkflow = (input: RedeliveryInput) => Promise<RedeliverySummary>;
export type RedeliveryHandle = WorkflowHandle<RedeliveryWorkflow>;

/**
 * Registers a dispatch: update-with-start of its workflow (a running one is reused; an id whose
 * workflow has completed is never started again). The workflow's answer, or `closed` when the id
 * belongs to a workflow that has already completed.
 */
export async function registerDispatch(
  temporal: Client,
  request: { taskQueue: string; registration: DispatchRegistration; options?: DispatchWorkflowInput['options'] },
): Promise<RegisterResult> {
  const { registration, options } = request;
  const input: DispatchWorkflowInput = { registration, ...(options ? { options } : {}) };
  const start = new WithStartWorkflowOperation(DISPATCH_WORKFLOW_TYPE, {
    workflowId: registration.id,
    taskQueue: request.taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
  });
  try {
    return await withDeadline(temporal, () =>
      temporal.workflow.executeUpdateWithStart(registerUpdate, { args: [registration], startWorkflowOperation: start }),
    );
  } catch (error) {
    if (causes(error).some((c) => c instanceof WorkflowExecutionAlreadyStartedError)) return { outcome: 'closed' };
    throw translate(error);
  }
}

/** Signals a carrier event; false when the workflow has closed (delivered and retention over, or ended). */
export function signalCarrierEvent(
  temporal: Client,
  dispatchId: string,
  event: CarrierEventInput | ServiceCarrierEventInput,
): Promise<boolean> {
  return signalOpen(temporal, dispatchId, (handle) =>
    handle.signal<[CarrierEventInput | ServiceCarrierEventInput]>(carrierEventSignal.name, event),
  );
}

/**
 * Signals several carrier events of one dispatch at once, in order (one `carrierEvents` signal); false
 * when the workflow has closed. The caller keeps the payload well under Temporal's 2 MB limit.
 */
export function signalCarrierEvents(temporal: Client, dispatchId: string, events: CarrierEventInput[]): Promise<boolean> {
  return signalOpen(temporal, dispatchId, (handle) => handle.signal(carrierEventsSignal, events));
}

/**
 * Starts a closed dispatch's workflow again from `input` (the projection's state) with the carrier
 * event as its first signal (signal-with-start); a run already started meanwhile just gets the
 * signal. Only for a dispatch whose workflow completed resting (docs/states.md "Closed dispatches").
 */
export async function restartDispatch(
  temporal: Client,
  request: { taskQueue: string; input: DispatchWorkflowInput; event: CarrierEventInput | ServiceCarrierEventInput },
): Promise<void> {
  try {
    await withDeadline(temporal, () =>
      temporal.workflow.signalWithStart<(input: DispatchWorkflowInput) => Promise<unknown>, [CarrierEventInput | ServiceCarrierEventInput]>(
        DISPATCH_WORKFLOW_TYPE,
        {
          workflowId: request.input.registration.id,
          taskQueue: request.taskQueue,
          args: [request.input],
          signal: carrierEventSignal.name,
          signalArgs: [request.event],
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        },
      ),
    );
  } catch (error) {
    throw translate(error);
  }
}

/** How the dispatch's workflow ended: `completed` (it rested and ended), `ended` (terminated, failed, …), or `running`/`unknown`. */
export async function dispatchWorkflowEnd(temporal: Client, dispatchId: string): Promise<'running' | 'completed' | 'ended' | 'unknown'> {
  const status = await workflowStatus(temporal, dispatchId);
  return status === undefined ? 'unknown' : status === 'RUNNING' ? 'running' : status === 'COMPLETED' ? 'completed' : 'ended';
}

/**
 * Whether a replay's redelivery workflow (its latest run) closed without completing: terminated,
 * cancelled, failed or timed out (`ended`); `unknown` when Temporal has no such workflow.
 */
export async function replayWorkflowEnd(temporal: Client, replayId: string): Promise<'open' | 'completed' | 'ended' | 'unknown'> {
  const status = await workflowStatus(temporal, replayId);
  if (status === undefined) return 'unknown';
  if (status === 'COMPLETED') return 'completed';
  return status === 'FAILED' || status === 'CANCELLED' || status === 'TERMINATED' || status === 'TIMED_OUT' ? 'ended' : 'open';
}

/** The status of the workflow id's latest run; undefined when Temporal has none. */
async function workflowStatus(temporal: Client, workflowId: string): Promise<WorkflowExecutionStatusName | undefined> {
  try {
    return (await withDeadline(temporal, () => temporal.workflow.getHandle(workflowId).describe())).status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw translate(error);
  }
}

/**
 * Of these dispatches (UUIDs), the ones Temporal still has runs of, and whether one is running: one
 * visibility query for the whole list (the retention sweep's batch), instead of a call per dispatch.
 */
export async function dispatchRunStates(temporal: Client, dispatchIds: readonly string[]): Promise<Map<string, 'running' | 'closed'>> {
  const states = new Map<string, 'running' | 'closed'>();
  if (dispatchIds.length === 0) return states;
  // UUIDs only (checked at every edge, and again here), so none can break out of its quoted literal.
  if (!dispatchIds.every((id) => /^[0-9a-fA-F-]{36}$/.test(id))) throw new Error('a dispatch id is a UUID');
  const query = `WorkflowId IN (${dispatchIds.map((id) => `'${id}'`).join(', ')})`;
  try {
    for await (const run of temporal.workflow.list({ query })) {
      if (run.status.name === 'RUNNING') states.set(run.workflowId, 'running');
      else if (!states.has(run.workflowId)) states.set(run.workflowId, 'closed');
    }
  } catch (error) {
    throw translate(error);
  }
  return states;
}

/** Asks a dispatch to recompute its prediction (the hourly refresh); false when its workflow has closed. */
export function signalRefresh(temporal: Client, dispatchId: string, request: PredictionRefreshRequest): Promise<boolean> {
  return signalOpen(temporal, dispatchId, (handle) => handle.signal(predictionRefreshSignal, request));
}

/** The dispatch workflow's own view of its state; undefined when no such workflow exists. */
export async function querySnapshot(temporal: Client, dispatchId: string): Promise<DispatchSnapshot | undefined> {
  try {
    return await withDeadline(temporal, () => temporal.workflow.getHandle(dispatchId).query(snapshotQuery));
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw translate(error);
  }
}

/**
 * Starts a redelivery workflow (workflows/redelivery.ts) driving a few known deliveries now. By
 * default (a dashboard test event) it takes them over from any other driver; the reconciler drives
 * only what it claimed, under its own token as the workflow id.
 */
export function startRedelivery(
  temporal: Client,
  taskQueue: string,
  deliveries: DeliveryKey[],
  options: { workflowId?: string; takeOver?: boolean } = {},
): Promise<RedeliveryHandle> {
  const workflowId = options.workflowId ?? `redeliver-${randomUUID()}`;
  return startRedeliveryWorkflow(temporal, taskQueue, workflowId, {
    mode: options.takeOver === false ? 'reconcile' : 'redeliver',
    replayId: workflowId,
    keys: deliveries,
  });
}

/** Starts a paged replay (its progress row already recorded under `replayId`, also its workflow id). */
export function startReplay(
  temporal: Client,
  request: { taskQueue: string; replayId: string; filter: ReplayFilterInput; pageSize?: number },
): Promise<RedeliveryHandle> {
  const { replayId, filter, pageSize } = request;
  return startRedeliveryWorkflow(temporal, request.taskQueue, replayId, {
    mode: 'replay',
    replayId,
    filter,
    ...(pageSize ? { pageSize } : {}),
  });
}

/**
 * Runs a retention sweep now (`npm run admin -- retention run`, workflows/retention.ts) on the
 * workers of `taskQueue`, with their windows, and waits for what it removed.
 */
export function runRetentionSweep(temporal: Client, taskQueue: string, input: { batchSize?: number } = {}): Promise<RetentionSummary> {
  return temporal.workflow.execute(RETENTION_WORKFLOW_TYPE, { taskQueue, workflowId: `retention-run-${randomUUID()}`, args: [input] });
}

/**
 * Starts the erasure workflow of a recorded erasure (workflows/erasure.ts). A run already started for
 * it (running or completed) is left alone (false): a repeated request gets the same erasure. A failed
 * one is started again (true, as a first start).
 */
export async function startErasure(temporal: Client, taskQueue: string, input: ErasureInput): Promise<boolean> {
  try {
    await withDeadline(temporal, () =>
      temporal.workflow.start<(input: ErasureInput) => Promise<ErasureSummary>>(ERASURE_WORKFLOW_TYPE, {
        workflowId: erasureWorkflowId(input.erasureId),
        taskQueue,
        args: [input],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      }),
    );
    return true;
  } catch (error) {
    if (causes(error).some((c) => c instanceof WorkflowExecutionAlreadyStartedError)) return false;
    throw translate(error);
  }
}

/**
 * Whether a worker has polled the task queue for workflow tasks lately (Temporal lists the pollers of
 * the last few minutes): the operator CLI's commands that hand their work to the worker check it, so
 * that a wrong TEMPORAL_TASK_QUEUE or a stopped worker is a failed command, not a wait for ever.
 */
export async function workerPolls(temporal: Client, taskQueue: string): Promise<boolean> {
  const answer = await withDeadline(temporal, () =>
    temporal.workflowService.describeTaskQueue({ namespace: temporal.options.namespace, taskQueue: { name: taskQueue } }),
  );
  return (answer.pollers?.length ?? 0) > 0;
}

const GRPC_NOT_FOUND = 5;

/** What a look at Temporal found: it answers and has the namespace, or what is wrong. */
export type TemporalCheck = { ok: true } | { ok: false; namespaceMissing: boolean; reason: string };

/**
 * Does this client's Temporal answer, and does it have the client's namespace (TEMPORAL_NAMESPACE)?
 * For /readyz and the API's start-up line. Asks for the namespace, which a worker needs too.
 */
export async function checkTemporal(temporal: Client, timeoutMs: number): Promise<TemporalCheck> {
  const namespace = temporal.options.namespace;
  try {
    await temporal.withDeadline(Date.now() + timeoutMs, () => temporal.workflowService.describeNamespace({ namespace }));
    return { ok: true };
  } catch (error) {
    const namespaceMissing = isGrpcServiceError(error) && error.code === GRPC_NOT_FOUND;
    return { ok: false, namespaceMissing, reason: error instanceof Error ? error.message : String(error) };
  }
}

async function startRedeliveryWorkflow(
  temporal: Client,
  taskQueue: string,
  workflowId: string,
  input: RedeliveryInput,
): Promise<RedeliveryHandle> {
  try {
    return await withDeadline(temporal, () =>
      temporal.workflow.start<RedeliveryWorkflow>(REDELIVERY_WORKFLOW_TYPE, { workflowId, taskQueue, args: [input] }),
    );
  } catch (error) {
    throw translate(error);
  }
}

async function signalOpen(temporal: Client, dispatchId: string, send: (handle: WorkflowHandle) => Promise<void>): Promise<boolean> {
  try {
    await withDeadline(temporal, () => send(temporal.workflow.getHandle(dispatchId)));
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw translate(error);
  }
}

function withDeadline<T>(temporal: Client, fn: () => Promise<T>): Promise<T> {
  return temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, fn);
}

function translate(error: unknown): unknown {
  return isUnavailable(error) ? new TemporalUnavailable({ cause: error }) : error;
}

function isUnavailable(error: unknown): boolean {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isGrpcDeadlineError(error)) return true;
  // TEMPORAL_NAMESPACE missing on this Temporal: an operator's fix, as refused credentials are.
  if (causes(error).some((cause) => cause instanceof NamespaceNotFoundError)) return true;
  return causes(error).some((cause) => isGrpcServiceError(cause) && UNAVAILABLE_CODES.has(cause.code));
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current && chain.length < 10; current = (current as { cause?: unknown }).cause) chain.push(current);
  return chain;
}
