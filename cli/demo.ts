// The demo issuer `npm start` creates on first run, so a new user can call the API at once, with a
// webhook endpoint that points at the launcher's own demo receiver (cli/demo-receiver.ts), so the
// first carrier event's signed webhooks show up in the terminal. The key is printed once; later runs
// find the issuer and print how to make another key. The endpoint is made once: a later run serves
// its receiver again (moving the endpoint when DEMO_WEBHOOK_PORT changed), and one the user removed
// or pointed elsewhere stays as the user left it.
import { SCOPES } from '../domain/api-keys.js';
import { createDemoWebhookEndpoint, findDemoWebhookEndpoint, moveDemoWebhookEndpoint } from '../db/demo-webhook-endpoints.js';
import { createApiKey, createIssuer } from '../db/issuers.js';
import type { Pool, PoolClient } from '../db/pool.js';
import { MAX_ENDPOINTS_PER_ISSUER } from '../db/webhook-endpoints.js';
import { isDemoReceiverUrl } from './demo-receiver.js';

export const DEMO_ISSUER_NAME = 'Demo Issuer';

export interface DemoWebhook {
  endpointId: string;
  /**
   * created (this run), kept (as it was), moved (to this run's DEMO_WEBHOOK_PORT): served by this
   * run's receiver. removed: the user removed it; elsewhere: the user pointed it at another URL.
   */
  state: 'created' | 'kept' | 'moved' | 'removed' | 'elsewhere';
  /** Disabled from the dashboard: still served, but nothing is delivered until it is enabled. */
  paused: boolean;
}

export interface Demo {
  issuerId: string;
  /** Only on the run that created the issuer. */
  key?: string;
  /** Undefined when no endpoint could be made (the issuer erased, or at its endpoint limit). */
  webhook?: DemoWebhook;
}

export async function ensureDemoIssuer(
  pool: Pool,
  options: {
    /**
     * The demo receiver's URL and how to start it. `serve` runs inside the transaction when the
     * endpoint is to be served: if it fails (its port is taken), nothing is created, so the key
     * that only this run would have printed is not lost.
     */
    webhook?: { url: string; serve: (endpoint: { issuerId: string; endpointId: string }) => Promise<void> };
    maxEndpoints?: number;
    /** Tests give their own name, so that their demo issuer is theirs alone. */
    name?: string;
  } = {},
): Promise<Demo> {
  const name = options.name ?? DEMO_ISSUER_NAME;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Two launchers on one database must not both create a demo issuer, nor two demo endpoints.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('cds-demo-issuer'))");
    const existing = await client.query<{ id: string }>('SELECT id FROM issuers WHERE name = $1 ORDER BY created_at LIMIT 1', [name]);
    let demo: Demo;
    if (existing.rows.length > 0) {
      demo = { issuerId: existing.rows[0].id };
    } else {
      const issuer = await createIssuer(client, name);
      const key = await createApiKey(client, { issuerId: issuer.id, scopes: [...SCOPES], mode: 'live' });
      demo = { issuerId: issuer.id, key: key!.key };
    }
    if (options.webhook) {
      demo.webhook = await ensureDemoWebhook(client, demo.issuerId, options.webhook.url, options.maxEndpoints ?? MAX_ENDPOINTS_PER_ISSUER);
      if (demo.webhook && ['created', 'kept', 'moved'].includes(demo.webhook.state))
        await options.webhook.serve({ issuerId: demo.issuerId, endpointId: demo.webhook.endpointId });
    }
    await client.query('COMMIT');
    return demo;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/** The issuer's demo endpoint, made on the first call (also for a demo issuer made before endpoints were). */
async function ensureDemoWebhook(client: PoolClient, issuerId: string, url: string, max: number): Promise<DemoWebhook | undefined> {
  const known = await findDemoWebhookEndpoint(client, issuerId);
  if (!known) {
    const endpointId = await createDemoWebhookEndpoint(client, { issuerId, url, max });
    return endpointId === undefined ? undefined : { endpointId, state: 'created', paused: false };
  }
  const { endpointId, paused } = known;
  if (known.removed) return { endpointId, state: 'removed', paused };
  if (known.url === url) return { endpointId, state: 'kept', paused };
  if (!isDemoReceiverUrl(known.url!)) return { endpointId, state: 'elsewhere', paused };
  await moveDemoWebhookEndpoint(client, endpointId, url);
  return { endpointId, state: 'moved', paused };
}
