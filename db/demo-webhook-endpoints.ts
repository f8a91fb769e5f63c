// Tables: demo_webhook_endpoints (and webhook_endpoints, for the one endpoint it names). The webhook
// endpoint `npm start` makes for its demo issuer (cli/demo.ts), inside the caller's transaction:
// made once per issuer, remembered apart from the endpoint so that a removed one is never made
// again, and moved when the demo receiver's port changes.
import { generateSecret } from '../domain/signing.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/vocabulary.js';
import { newId } from './ids.js';
import type { PoolClient } from './pool.js';

export interface DemoWebhookEndpointRow {
  endpointId: string;
  /** Undefined when the endpoint is gone (its issuer erased). */
  url?: string;
  /** Removed (`webhook remove`, the API's DELETE) or gone. */
  removed: boolean;
  /** Disabled from the dashboard (paused): it is still there. */
  paused: boolean;
}

/** The demo endpoint made for this issuer, if one ever was. */
export async function findDemoWebhookEndpoint(client: PoolClient, issuerId: string): Promise<DemoWebhookEndpointRow | undefined> {
  const { rows } = await client.query<{ endpoint_id: string; url: string | null; removed: boolean; paused: boolean }>(
    `SELECT d.endpoint_id, e.url, e.id IS NULL OR e.disabled_at IS NOT NULL AS removed, e.paused_at IS NOT NULL AS paused
       FROM demo_webhook_endpoints d LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.issuer_id = $1`,
    [issuerId],
  );
  const row = rows[0];
  return row && { endpointId: row.endpoint_id, url: row.url ?? undefined, removed: row.removed, paused: row.paused };
}

/**
 * A live endpoint subscribed to every event type, with a fresh secret, remembered as the issuer's
 * demo endpoint. Undefined (nothing made) when the issuer is erased or already has `max` endpoints.
 */
export async function createDemoWebhookEndpoint(
  client: PoolClient,
  input: { issuerId: string; url: string; max: number },
): Promise<string | undefined> {
  // As createWebhookEndpoint (db/webhook-endpoints.ts): the issuer row's lock keeps the count below true.
  await client.query('SELECT 1 FROM issuers WHERE id = $1 FOR UPDATE', [input.issuerId]);
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO webhook_endpoints (id, issuer_id, url, events, secret, mode, description)
     SELECT $1, i.id, $3, $4, $5, 'live', 'npm start demo receiver'
       FROM issuers i
      WHERE i.id = $2 AND i.erased_at IS NULL
        AND (SELECT count(*) FROM webhook_endpoints WHERE issuer_id = i.id AND disabled_at IS NULL) < $6
     RETURNING id`,
    [newId('whe'), input.issuerId, input.url, [...WEBHOOK_EVENT_TYPES], generateSecret(), input.max],
  );
  if (rows.length === 0) return undefined;
  await client.query('INSERT INTO demo_webhook_endpoints (issuer_id, endpoint_id) VALUES ($1, $2)', [input.issuerId, rows[0].id]);
  return rows[0].id;
}

/** Points the demo endpoint at the demo receiver's new URL (another DEMO_WEBHOOK_PORT). */
export async function moveDemoWebhookEndpoint(client: PoolClient, endpointId: string, url: string): Promise<void> {
  await client.query('UPDATE webhook_endpoints SET url = $2 WHERE id = $1 AND disabled_at IS NULL', [endpointId, url]);
}
