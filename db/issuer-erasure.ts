// Tables: api_keys, webhook_endpoints (and webhook_endpoint_send_slots, webhook_replays, the webhook
// events no dispatch names with their deliveries and attempts), tracking_feeds with their counts,
// unmatched and ignored checkpoints (when those tables exist), dashboard_users (and their tokens and sessions),
// tracking_page_branding, idempotency_keys, rate_limit_windows (the issuer's keys' windows). What
// `issuer erase` removes once every dispatch of the issuer is erased (docs/admin-cli.md "Erasure"):
// everything else the issuer configured, in one transaction. The issuer row itself stays (its name
// only), because tombstones and the shared transit history (db/transit-history.ts) refer to it.
import type { Pool } from './pool.js';

/**
 * Revokes every key of the issuer still active, `issuer erase`'s first step: API processes refuse a
 * revoked key within 5 s (API_KEY_CACHE_TTL_MS at most), so the issuer's backend can no longer
 * register a dispatch behind the erasure. Returns how long, by the database's clock, until `quietMs`
 * have passed since the last of its keys was revoked (0 when they have, or it has none).
 */
export async function revokeIssuerKeys(pool: Pool, issuerId: string, quietMs: number): Promise<number> {
  const { rows } = await pool.query<{ wait_ms: number }>(
    `WITH revoked AS (UPDATE api_keys SET revoked_at = now() WHERE issuer_id = $1 AND revoked_at IS NULL RETURNING revoked_at),
          last AS (SELECT greatest((SELECT max(revoked_at) FROM revoked), (SELECT max(revoked_at) FROM api_keys WHERE issuer_id = $1)) AS at)
     SELECT coalesce(greatest(0, ceil(extract(epoch FROM (at + $2 * interval '1 millisecond' - now())) * 1000)), 0)::int AS wait_ms FROM last`,
    [issuerId, quietMs],
  );
  return rows[0].wait_ms;
}

/** Rows removed per table. */
export type IssuerErasureCounts = Record<string, number>;

export async function eraseIssuerRows(pool: Pool, issuerId: string): Promise<IssuerErasureCounts> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const counts: IssuerErasureCounts = {};
    const run = async (table: string, sql: string) => {
      counts[table] = (counts[table] ?? 0) + ((await client.query(sql, [issuerId])).rowCount ?? 0);
    };
    const endpoints = `SELECT id FROM webhook_endpoints WHERE issuer_id = $1`;
    const events = `SELECT id FROM webhook_events WHERE issuer_id = $1`;
    // Webhook events that name no dispatch (the dashboard's test events) and every delivery to the
    // issuer's endpoints.
    await run('delivery_attempts', `DELETE FROM delivery_attempts WHERE event_id IN (${events}) OR endpoint_id IN (${endpoints})`);
    await run('webhook_deliveries', `DELETE FROM webhook_deliveries WHERE event_id IN (${events}) OR endpoint_id IN (${endpoints})`);
    await run('webhook_replays', `DELETE FROM webhook_replays WHERE endpoint_id IN (${endpoints}) OR event_id IN (${events})`);
    await run('webhook_events', `DELETE FROM webhook_events WHERE issuer_id = $1`);
    await run('webhook_endpoint_send_slots', `DELETE FROM webhook_endpoint_send_slots WHERE endpoint_id IN (${endpoints})`);
    await run('webhook_endpoints', `DELETE FROM webhook_endpoints WHERE issuer_id = $1`);
    // Tracking feeds, where that feature is installed: their counts, unmatched and ignored checkpoints first.
    const present = async (table: string) => (await client.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [table])).rows[0].found;
    const feeds = `SELECT id FROM tracking_feeds WHERE issuer_id = $1`;
    if (await present('feed_unmatched_checkpoints'))
      await run('feed_unmatched_checkpoints', `DELETE FROM feed_unmatched_checkpoints WHERE feed_id IN (${feeds}) OR issuer_id = $1`);
    if (await present('feed_ignored_checkpoints'))
      await run('feed_ignored_checkpoints', `DELETE FROM feed_ignored_checkpoints WHERE feed_id IN (${feeds}) OR issuer_id = $1`);
    if (await present('tracking_feed_counts'))
      await run('tracking_feed_counts', `DELETE FROM tracking_feed_counts WHERE feed_id IN (${feeds})`);
    if (await present('tracking_feeds')) await run('tracking_feeds', `DELETE FROM tracking_feeds WHERE issuer_id = $1`);
    await run(
      'rate_limit_windows',
      `DELETE FROM rate_limit_windows WHERE subject IN (SELECT 'key:' || id FROM api_keys WHERE issuer_id = $1)`,
    );
    await run('api_keys', `DELETE FROM api_keys WHERE issuer_id = $1`);
    await run('dashboard_users', `DELETE FROM dashboard_users WHERE issuer_id = $1`);
    // The row stays (its id is never reused), marked: it takes no new key, user or endpoint.
    await client.query('UPDATE issuers SET erased_at = coalesce(erased_at, now()) WHERE id = $1', [issuerId]);
    await run('tracking_page_branding', `DELETE FROM tracking_page_branding WHERE issuer_id = $1`);
    await run('idempotency_keys', `DELETE FROM idempotency_keys WHERE issuer_id = $1`);
    await client.query('COMMIT');
    return counts;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
