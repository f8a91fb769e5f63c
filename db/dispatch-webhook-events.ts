// The webhook events one dispatch caused, each with its delivery to every endpoint it was meant for
// (state and attempts so far), for the dashboard's dispatch page. Written by the projection activity
// and the delivery activity (db/webhooks.ts); only read here.
import type { WebhookEventType } from '../domain/state-machine.js';
import type { Pool } from './pool.js';
import type { DeliveryState } from './webhooks.js';

export interface DispatchWebhookEvent {
  id: string;
  type: WebhookEventType;
  createdAt: Date;
  /** One per endpoint the event was for; empty when no endpoint had subscribed to its type. */
  deliveries: Array<{
    endpointId: string;
    endpointUrl: string;
    state: DeliveryState;
    attempts: number;
    lastAttemptAt: Date | null;
    skippedReason: string | null;
  }>;
}

/** Oldest first; scoped by issuer as well as dispatch, so a stray id can never show another's events. */
export async function listDispatchWebhookEvents(pool: Pool, issuerId: string, dispatchId: string): Promise<DispatchWebhookEvent[]> {
  const { rows } = await pool.query(
    `SELECT ev.id, ev.type, ev.created_at,
            coalesce(json_agg(json_build_object(
              'endpointId', d.endpoint_id, 'endpointUrl', e.url, 'state', d.state, 'attempts', d.attempts,
              'lastAttemptAt', d.last_attempt_at, 'skippedReason', d.skipped_reason) ORDER BY d.endpoint_id)
              FILTER (WHERE d.endpoint_id IS NOT NULL), '[]') AS deliveries
       FROM webhook_events ev
       LEFT JOIN webhook_deliveries d ON d.event_id = ev.id
       LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE ev.dispatch_id = $1 AND ev.issuer_id = $2
      GROUP BY ev.id
      ORDER BY ev.created_at, ev.id`,
    [dispatchId, issuerId],
  );
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    createdAt: row.created_at,
    deliveries: (row.deliveries as Array<Record<string, unknown>>).map((d) => ({
      endpointId: d.endpointId as string,
      endpointUrl: d.endpointUrl as string,
      state: d.state as DeliveryState,
      attempts: d.attempts as number,
      lastAttemptAt: d.lastAttemptAt ? new Date(d.lastAttemptAt as string) : null,
      skippedReason: (d.skippedReason as string | null) ?? null,
    })),
  }));
}
