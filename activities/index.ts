// Every activity the worker registers, built from the worker's dependencies.
import type { Client } from '@temporalio/client';
import type { Pool } from '../db/pool.js';
import type { Config } from '../platform/config.js';
import { createPredictionRefreshActivities } from './prediction-refresh.js';
import { createProjectionActivities } from './projection.js';
import { createWebhookDeliveryActivities } from './webhook-delivery.js';

export interface ActivityDeps {
  pool: Pool;
  config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'>;
  /** Signals dispatch workflows (the prediction refresh); bound to the worker's namespace. */
  temporal: Client;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createProjectionActivities(deps),
    ...createWebhookDeliveryActivities(deps),
    ...createPredictionRefreshActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
