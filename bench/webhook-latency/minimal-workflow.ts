// The baseline of the webhook-latency benchmark's throughput figure: the least a Temporal workflow
// can do to turn a signal into a webhook POST. It waits for a signal, runs one activity that POSTs
// a fixed body to the receiver, and waits for the next (a long-lived workflow that gets several
// signals, like a dispatch). Bundled on its own by minimal-worker.ts; same activity retry policy
// as the product's delivery activity, no database, no API.
// A signal may ask for a piece of the dispatch workflow's shape on top (`Shape`), so that the run
// can say what each piece costs: the search-attribute upsert the dispatch workflow does on each
// change, and a first activity (as writeProjection comes before deliverWebhook) whose completion
// costs one more workflow task before the POST can be scheduled — or the same first activity run as
// a local activity, inside the workflow task, which is what the dispatch workflow could do instead.
import { condition, defineSignal, proxyActivities, proxyLocalActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { COUNTRY_CODE, DISPATCH_STATUS, ISSUER_ID } from '../../temporal/search-attributes.js';
import type { MinimalActivities } from './minimal-worker.js';

export interface Shape {
  searchAttributes?: boolean;
  firstActivity?: boolean;
  /** Run the first activity as a local activity (with firstActivity). */
  local?: boolean;
}

export const pingSignal = defineSignal<[Shape?]>('ping');

const { postFixedBody, firstActivity } = proxyActivities<MinimalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const local = proxyLocalActivities<MinimalActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export async function minimalWorkflow(): Promise<void> {
  const queue: Shape[] = [];
  let changes = 0;
  setHandler(pingSignal, (shape = {}) => void queue.push(shape));
  for (;;) {
    await condition(() => queue.length > 0);
    const shape = queue.shift()!;
    if (shape.firstActivity) await (shape.local ? local.firstActivity() : firstActivity());
    if (shape.searchAttributes) {
      changes += 1;
      upsertSearchAttributes([
        { key: DISPATCH_STATUS, value: changes % 2 ? 'in_transit' : 'out_for_delivery' },
        { key: ISSUER_ID, value: 'iss_bench' },
        { key: COUNTRY_CODE, value: 'FR' },
      ]);
    }
    await postFixedBody();
  }
}
