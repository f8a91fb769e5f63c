// Every activity the worker registers, built from the worker's dependencies.
import type { Client } from '@temporalio/client';
import type { AreaStatisticsCache } from '../db/area-statistics-cache.js';
import { CountryStatisticsCache } from '../db/country-statistics-cache.js';
import type { Pool } from '../db/pool.js';
import type { Config } from '../platform/config.js';
import { createErasureActivities } from './erasure.js';
import { createPredictionRefreshActivities } from './prediction-refresh.js';
import { createProjectionActivities } from './projection.js';
import { HandedDeliveries } from './handed-deliveries.js';
import { createRedeliveryActivities } from './redelivery.js';
import { createRetentionActivities } from './retention.js';
import { createWebhookDeliveryActivities } from './webhook-delivery.js';

export interface ActivityDeps {
  pool: Pool;
  config: Pick<
    Config,
    | 'WEBHOOK_RETRY_SCHEDULE'
    | 'WEBHOOK_TIMEOUT_MS'
    | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'
    | 'WEBHOOK_AUTO_DISABLE_AFTER'
    | 'OVERDUE_BUSINESS_DAYS'
    | 'TEMPORAL_TASK_QUEUE'
    | 'DELIVERED_RETENTION'
    | 'EXCEPTION_RETENTION'
    | 'RETENTION_DISPATCH'
    | 'RETENTION_WEBHOOK_PAYLOAD'
    | 'RETENTION_TRANSIT_HISTORY'
    | 'RETENTION_BATCH_PAUSE'
  >;
  /** Signals dispatch workflows (the prediction refresh); bound to the worker's namespace. */
  temporal: Client;
  /** The worker's cache of country statistics; one per process unless a test brings its own. */
  countryStatistics?: CountryStatisticsCache;
  /** The worker's cache of area levels and delays, listening for changes (worker/create-worker.ts openWorker). */
  areaStatistics?: AreaStatisticsCache;
  /** `npm start`'s demo receiver: the loopback origin one endpoint may reach (activities/webhook-delivery.ts). */
  loopbackOriginFor?: (endpointId: string) => string | undefined;
}

export function createActivities(deps: ActivityDeps) {
  // One cache for the projection writes and the refresh: a refresh run's reads serve the writes it signals.
  const countryStatistics = deps.countryStatistics ?? new CountryStatisticsCache(deps.pool);
  // A change's write hands its new deliveries to their first attempt in this worker.
  const handed = new HandedDeliveries();
  return {
    ...createProjectionActivities({ ...deps, countryStatistics, handed }),
    ...createWebhookDeliveryActivities({ ...deps, handed }),
    ...createRedeliveryActivities(deps),
    ...createPredictionRefreshActivities({ ...deps, countryStatistics }),
    ...createRetentionActivities(deps),
    ...createErasureActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
