// Entry point of the workflow bundle: every workflow the worker runs.
export { dispatchWorkflow } from './dispatch.js';
export { redeliveryWorkflow } from './redelivery.js';
