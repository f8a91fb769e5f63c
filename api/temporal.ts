// How the API talks to the dispatch workflows: registration by update-with-start, carrier events
// by signal. Temporal being unreachable (or too slow to answer) becomes 503 service_unavailable.
import {
  isGrpcDeadlineError,
  isGrpcServiceError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import type { Config } from '../platform/config.js';
import {
  carrierEventSignal,
  DISPATCH_WORKFLOW_TYPE,
  registerUpdate,
  type CarrierEventInput,
  type DispatchRegistration,
  type DispatchWorkflowInput,
  type RegisterOutcome,
} from '../workflows/definitions.js';
import { serviceUnavailable } from './errors.js';

/** How long a request may wait on Temporal before it gives up with 503. */
const TEMPORAL_DEADLINE_MS = 10_000;
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/** The workflow's answer, or `closed` when the id belongs to a workflow that has already completed. */
export async function registerDispatch(
  temporal: Client,
  config: Config,
  registration: DispatchRegistration,
): Promise<RegisterOutcome | { outcome: 'closed' }> {
  const input: DispatchWorkflowInput = { registration, options: { deliveredRetentionMs: config.DELIVERED_RETENTION } };
  const start = new WithStartWorkflowOperation(DISPATCH_WORKFLOW_TYPE, {
    workflowId: registration.id,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
  });
  try {
    return await withDeadline(temporal, () =>
      temporal.workflow.executeUpdateWithStart(registerUpdate, { args: [registration], startWorkflowOperation: start }),
    );
  } catch (error) {
    if (
      error instanceof WorkflowExecutionAlreadyStartedError ||
      causes(error).some((c) => c instanceof WorkflowExecutionAlreadyStartedError)
    ) {
      return { outcome: 'closed' };
    }
    throw translate(error);
  }
}

/** Signals the carrier event; returns false when the workflow has closed (delivered, retention over). */
export async function signalCarrierEvent(temporal: Client, dispatchId: string, event: CarrierEventInput): Promise<boolean> {
  try {
    await withDeadline(temporal, () => temporal.workflow.getHandle(dispatchId).signal(carrierEventSignal, event));
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw translate(error);
  }
}

/** For /readyz: can this process reach the Temporal frontend? */
export async function temporalReachable(temporal: Client, timeoutMs: number): Promise<boolean> {
  try {
    await temporal.withDeadline(Date.now() + timeoutMs, () => temporal.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}

function withDeadline<T>(temporal: Client, fn: () => Promise<T>): Promise<T> {
  return temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, fn);
}

function translate(error: unknown): unknown {
  if (isUnavailable(error)) return serviceUnavailable('the workflow service is unavailable; retry shortly');
  return error;
}

function isUnavailable(error: unknown): boolean {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isGrpcDeadlineError(error)) return true;
  return causes(error).some(
    (cause) => isGrpcServiceError(cause) && (cause.code === GRPC_UNAVAILABLE || cause.code === GRPC_DEADLINE_EXCEEDED),
  );
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current && chain.length < 10; current = (current as { cause?: unknown }).cause) chain.push(current);
  return chain;
}
