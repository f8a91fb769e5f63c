-- Up Migration
-- The hourly prediction refresh (docs/predictions.md "Refresh"): when the refresh last claimed each
-- dispatch. The bulk query skips a dispatch claimed less than an hour before, so no dispatch is
-- refreshed twice within an hour, and one that is skipped costs no signal and no workflow history.

ALTER TABLE dispatches ADD COLUMN prediction_refreshed_at timestamptz;
-- The refresh pages through the dispatches not yet delivered in id order.
CREATE INDEX dispatches_open_id_idx ON dispatches (id) WHERE status <> 'delivered';

-- Down Migration
DROP INDEX dispatches_open_id_idx;
ALTER TABLE dispatches DROP COLUMN prediction_refreshed_at;
