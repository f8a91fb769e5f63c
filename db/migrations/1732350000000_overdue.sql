-- Up Migration
-- Overdue cards (docs/states.md "Overdue"): a dispatch in exception `overdue` has left the hourly prediction
-- refresh (db/prediction-refresh.ts). Lost cards pile up over the years; the refresh pages through
-- this index so it never reads them again.
CREATE INDEX dispatches_refreshed_id_idx ON dispatches (id)
  WHERE status <> 'delivered' AND exception_reason IS DISTINCT FROM 'overdue';

-- Down Migration
DROP INDEX dispatches_refreshed_id_idx;
