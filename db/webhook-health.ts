// An issuer's webhook endpoints as the dashboard shows them (Settings → Webhooks): each with its
// health — last successful attempt, failure rate of the attempts of the last 24 hours, and how
// many deliveries are undeliverable now (a replay takes them out of that count). Always scoped by
// the issuer: another issuer's endpoint is simply not found.
import type { Pool, PoolClient } from './pool.js';
import { listWebhookEndpoints, type WebhookEndpointSummary } from './webhook-endpoints.js';

type Db = Pool | PoolClient;

/** The window of the failure rate. */
export const HEALTH_WINDOW_HOURS = 24;

export interface EndpointHealth {
  lastSuccessAt: Date | null;
  /** Attempts in the window, and how many of them failed. */
  recentAttempts: number;
  recentFailures: number;
  undeliverable: number;
}

export type EndpointWithHealth = WebhookEndpointSummary & { health: EndpointHealth };

/** One endpoint of the issuer (paused ones too; removed ones never), without its secret. */
export async function findEndpoint(db: Db, issuerId: string, id: string): Promise<WebhookEndpointSummary | undefined> {
  // At most 20 per issuer (MAX_ENDPOINTS_PER_ISSUER): reading them all is the scoped lookup.
  return (await listWebhookEndpoints(db, { issuerId })).find((endpoint) => endpoint.id === id);
}

export async function listEndpointsWithHealth(db: Db, issuerId: string): Promise<EndpointWithHealth[]> {
  const endpoints = await listWebhookEndpoints(db, { issuerId });
  if (endpoints.length === 0) return [];
  const { rows } = await db.query<{ id: string; last_success_at: Date | null; attempts: number; failures: number; undeliverable: number }>(
    `SELECT e.id,
            (SELECT max(a.started_at) FROM delivery_attempts a WHERE a.endpoint_id = e.id AND a.error IS NULL) AS last_success_at,
            r.attempts, r.failures,
            (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'undeliverable')::int AS undeliverable
       FROM unnest($1::text[]) AS e (id)
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS attempts, count(*) FILTER (WHERE a.error IS NOT NULL)::int AS failures
           FROM delivery_attempts a
          WHERE a.endpoint_id = e.id AND a.started_at > now() - make_interval(hours => $2)
       ) r`,
    [endpoints.map((endpoint) => endpoint.id), HEALTH_WINDOW_HOURS],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return endpoints.map((endpoint) => {
    const row = byId.get(endpoint.id)!;
    return {
      ...endpoint,
      health: {
        lastSuccessAt: row.last_success_at,
        recentAttempts: row.attempts,
        recentFailures: row.failures,
        undeliverable: row.undeliverable,
      },
    };
  });
}
