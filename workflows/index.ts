// Entry point of the workflow bundle: every workflow the worker runs.
export { dispatchWorkflow } from './dispatch.js';
export { erasureWorkflow } from './erasure.js';
export { predictionRefreshWorkflow } from './prediction-refresh.js';
export { reconcileDeliveriesWorkflow, redeliveryWorkflow } from './redelivery.js';
export { retentionWorkflow } from './retention.js';
