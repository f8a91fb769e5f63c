-- Up Migration
-- The erasures still pending (db/erasure-records.ts findStalledErasures): the retention sweep starts
-- the workflow of any requested a while ago, in case its request recorded it and went no further
-- (the API process died, or Temporal was down). A handful of rows among every tombstone ever written.
CREATE INDEX erasures_pending_idx ON erasures (id) WHERE status = 'pending';

-- Down Migration
DROP INDEX erasures_pending_idx;
