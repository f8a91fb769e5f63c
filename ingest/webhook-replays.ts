// Replaying stored webhook deliveries, outside any dispatch workflow: a redelivery workflow
// (workflows/redelivery.ts, started by temporal/client.ts) runs the same delivery activity, signing
// and retry schedule. Shared by the operator CLI's `deliveries replay` and the dashboard (replay one
// event, replay a time range); a dashboard test event starts one directly (temporal/client.ts
// startRedelivery).
//
// Nothing is reset before the workflow has started: a replay only records its progress row and
// starts the workflow, which takes each delivery over when it is about to drive it (a waiting
// retry goes on from its last attempt number; a settled delivery starts a new cycle at attempt 1).
//
// An event whose payload expired (docs/privacy.md, RETENTION_WEBHOOK_PAYLOAD) cannot be sent again:
// a replay that names it is refused (PayloadExpired: the API answers 409), a time range leaves it out.
// Only an event the replay would select is refused so (delivered to the replay's endpoint): another
// issuer's or mode's id is ignored as an unknown one is, never told apart as expired.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Pool } from '../db/pool.js';
import {
  countReplayMatches,
  createReplay,
  failReplay,
  findExpiredPayloads,
  toFilterInput,
  type ReplayFilter,
} from '../db/webhook-replays.js';
import { startReplay, type RedeliveryHandle } from '../temporal/client.js';

/** A replay named an event whose payload the retention window cleared: its message says so, naming the event. */
export class PayloadExpired extends Error {
  constructor(
    readonly eventId: string,
    readonly expiredAt: Date,
  ) {
    super(
      `the payload of webhook event ${eventId} expired on ${expiredAt.toISOString()} (RETENTION_WEBHOOK_PAYLOAD) and was cleared: it cannot be replayed`,
    );
  }
}

export interface StartedReplay {
  /** The replay's id: its progress row (db/webhook-replays.ts getReplay) and its workflow id. */
  id: string;
  /** Deliveries the filter matched at the start. */
  total: number;
  handle: RedeliveryHandle;
}

/**
 * Starts a paged replay of the deliveries the filter matches. Undefined when nothing matches (no
 * such delivery, or its endpoint is removed or disabled); PayloadExpired when it names an event whose
 * payload expired. When the workflow cannot be started the
 * progress row is marked failed and the error is thrown; no delivery has been touched.
 */
export async function replayDeliveries(
  deps: { pool: Pool; temporal: Client; taskQueue: string },
  filter: ReplayFilter,
  options: { pageSize?: number } = {},
): Promise<StartedReplay | undefined> {
  const named = 'eventId' in filter ? [filter.eventId] : 'eventIds' in filter ? filter.eventIds : [];
  // Only among the events the replay would select (those delivered to its endpoint): any other id is ignored, not told apart.
  const endpointId = 'endpointId' in filter ? filter.endpointId : undefined;
  const [expired] = named.length > 0 ? await findExpiredPayloads(deps.pool, { eventIds: named, endpointId }) : [];
  if (expired) throw new PayloadExpired(expired.eventId, expired.expiredAt);
  const total = await countReplayMatches(deps.pool, filter);
  if (total === 0) return undefined;
  const id = `replay-${randomUUID()}`;
  await createReplay(deps.pool, { id, filter, total });
  try {
    const handle = await startReplay(deps.temporal, {
      taskQueue: deps.taskQueue,
      replayId: id,
      filter: toFilterInput(filter),
      pageSize: options.pageSize,
    });
    return { id, total, handle };
  } catch (error) {
    await failReplay(deps.pool, id);
    throw error;
  }
}
