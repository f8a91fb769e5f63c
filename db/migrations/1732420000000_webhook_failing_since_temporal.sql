-- Up Migration
-- Auto-disable on Temporal's clock (docs/webhooks.md "Auto-disable"): failing_since_temporal is the
-- Temporal time (the attempt's scheduled time as Temporal gives it to the activity) of the first
-- failed attempt since the last success, and the threshold is measured from it to the failing
-- attempt's Temporal time. failing_since stays the wall-clock instant shown by the API and the
-- dashboard and used for the missed range. Read only while failing_since is set; null for a
-- failure recorded before this column (then failing_since stands in for it).
ALTER TABLE webhook_endpoints ADD COLUMN failing_since_temporal timestamptz;

-- Down Migration
ALTER TABLE webhook_endpoints DROP COLUMN failing_since_temporal;
