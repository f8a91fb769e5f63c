// The webhook deliveries a dispatch's changes start (step 7 of docs/architecture.md "The path of one
// carrier event"): each change's first attempts in one regular activity, then each delivery still to
// retry after its delay in an activity of its own, on the prescribed schedule
// (delivery-options.ts). Regular activities, not local ones (DESIGN §1): a delivery waits on the
// consumer, for hours when it retries, and must not hold the workflow task. The state machine goes
// on meanwhile; the dispatch's run ends, or continues as new, only once `inFlight` is 0.
import { log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { DeliveryKey } from '../temporal/contract.js';
import { DELIVERY_ACTIVITY_OPTIONS } from './delivery-options.js';

const { deliverWebhook, deliverWebhooks } = proxyActivities<Activities>(DELIVERY_ACTIVITY_OPTIONS);

export class Deliveries {
  /** Deliveries started and not yet settled (delivered, undeliverable or skipped). */
  inFlight = 0;

  /**
   * Starts a change's deliveries without waiting for them, all under `driver` (the dispatch's token,
   * which a replay may take over).
   */
  start(deliveries: DeliveryKey[], driver: string): void {
    if (deliveries.length === 0) return;
    this.inFlight += deliveries.length;
    // Each attempt's outcome is logged by the activity, in the worker's main thread: a workflow log
    // line crosses the sandbox as a sink call in every activation that makes one.
    deliverWebhooks({ deliveries, driver }).then(
      (results) =>
        results.forEach((result, i) => {
          if (result.outcome === 'retry') return void this.retry(deliveries[i], driver, result.delayMs);
          this.inFlight -= 1;
        }),
      (error) => {
        log.error('webhook deliveries failed', { deliveries: deliveries.length, error: String(error) });
        this.inFlight -= deliveries.length;
      },
    );
  }

  private async retry(delivery: DeliveryKey, driver: string, delayMs: number): Promise<void> {
    try {
      await sleep(delayMs);
      const result = await deliverWebhook({ ...delivery, driver });
      log.info('webhook delivery settled', { ...delivery, ...result });
    } catch (error) {
      log.error('webhook delivery failed', { ...delivery, error: String(error) });
    } finally {
      this.inFlight -= 1;
    }
  }
}
