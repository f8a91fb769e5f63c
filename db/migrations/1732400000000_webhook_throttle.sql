-- Up Migration
-- Per-endpoint throttle (docs/webhooks.md "Throttle"): an endpoint's `rate_limit` deliveries per
-- second, honoured across every worker process. One row per throttled endpoint holds the earliest
-- time the next attempt may be sent; a sender claims its slot with one atomic upsert
-- (db/webhooks.ts claimSendSlot): its slot is greatest(now, next_at), and next_at moves 1/rate past it.
CREATE TABLE webhook_endpoint_send_slots (
  endpoint_id text PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  next_at     timestamptz NOT NULL
);

-- Down Migration
DROP TABLE webhook_endpoint_send_slots;
