-- Up Migration
-- Every list an issuer or an operator pages through is read through an index that serves both its
-- filter and its order, at any depth (test/db/list-plans.test.ts, at 10⁵ rows a table):
-- - GET /v1/dispatches and the dashboard's search with both status and country_code;
-- - GET /v1/events with `type` (a rare type walked all the issuer's events);
-- - GET /v1/dispatches/{id}/events in arrival order (the primary key holds dedupe_key order only);
-- - a feed's unmatched and ignored lists in their full order (received_at, tracking_number, event_id);
-- - the admin CLI's `deliveries list`, newest first, alone or by endpoint or undeliverable.
-- Plain CREATE INDEX: node-pg-migrate runs a .sql migration in a transaction, where CONCURRENTLY is
-- refused, so each table's writes wait while its index is built (seconds per million rows).
CREATE INDEX dispatches_issuer_status_country_created_idx
  ON dispatches (issuer_id, mode, status, country_code, created_at DESC, id DESC);
CREATE INDEX webhook_events_issuer_type_idx ON webhook_events (issuer_id, mode, type, created_at DESC, id DESC);
CREATE INDEX carrier_events_dispatch_received_idx ON carrier_events (dispatch_id, received_at, dedupe_key);
CREATE INDEX feed_unmatched_page_idx ON feed_unmatched_checkpoints (feed_id, received_at DESC, tracking_number DESC, event_id DESC);
DROP INDEX feed_unmatched_received_idx;
CREATE INDEX feed_ignored_page_idx ON feed_ignored_checkpoints (feed_id, received_at DESC, tracking_number DESC, event_id DESC);
DROP INDEX feed_ignored_received_idx;
CREATE INDEX webhook_deliveries_created_idx ON webhook_deliveries (created_at DESC, event_id DESC, endpoint_id DESC);
CREATE INDEX webhook_deliveries_endpoint_created_idx ON webhook_deliveries (endpoint_id, created_at DESC, event_id DESC);
DROP INDEX webhook_deliveries_endpoint_idx;
CREATE INDEX webhook_deliveries_undeliverable_created_idx ON webhook_deliveries (created_at DESC, event_id DESC, endpoint_id DESC)
  WHERE state = 'undeliverable';
DROP INDEX webhook_deliveries_undeliverable_idx;

-- Down Migration
CREATE INDEX webhook_deliveries_undeliverable_idx ON webhook_deliveries (created_at DESC) WHERE state = 'undeliverable';
DROP INDEX webhook_deliveries_undeliverable_created_idx;
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC);
DROP INDEX webhook_deliveries_endpoint_created_idx;
DROP INDEX webhook_deliveries_created_idx;
CREATE INDEX feed_ignored_received_idx ON feed_ignored_checkpoints (feed_id, received_at DESC);
DROP INDEX feed_ignored_page_idx;
CREATE INDEX feed_unmatched_received_idx ON feed_unmatched_checkpoints (feed_id, received_at DESC);
DROP INDEX feed_unmatched_page_idx;
DROP INDEX carrier_events_dispatch_received_idx;
DROP INDEX webhook_events_issuer_type_idx;
DROP INDEX dispatches_issuer_status_country_created_idx;
