-- Up Migration
-- Retention (docs/privacy.md "What is kept, and for how long"; db/retention.ts): when a settled
-- webhook event's payload was cleared (its body is then empty and a replay is refused), and the
-- indexes the daily sweep walks in bounded batches, oldest first.

ALTER TABLE webhook_events ADD COLUMN payload_expired_at timestamptz;
CREATE INDEX webhook_events_payload_kept_idx ON webhook_events (created_at) WHERE payload_expired_at IS NULL;
CREATE INDEX transit_history_delivered_idx ON transit_history (delivered_date);
CREATE INDEX tracking_links_expires_idx ON tracking_links (expires_at);
CREATE INDEX dispatches_resting_updated_idx ON dispatches (updated_at, id) WHERE status IN ('delivered', 'exception');
-- Deleting a tracking link (expired, or its dispatch erased) checks its gate passes by link: without
-- this index each deleted link read the whole table (bench/retention).
CREATE INDEX tracking_gate_passes_link_idx ON tracking_gate_passes (link_id);

-- Down Migration
DROP INDEX tracking_gate_passes_link_idx;
DROP INDEX dispatches_resting_updated_idx;
DROP INDEX tracking_links_expires_idx;
DROP INDEX transit_history_delivered_idx;
DROP INDEX webhook_events_payload_kept_idx;
ALTER TABLE webhook_events DROP COLUMN payload_expired_at;
