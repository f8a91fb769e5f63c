-- Up Migration
-- The retention sweep starts again every erasure not completed (db/erasure-records.ts
-- findUnfinishedErasures): pending ones whose request went no further, and failed ones, whose
-- workflow ran out of retries (Postgres or Temporal down for minutes). A handful of rows among every
-- tombstone ever written.
DROP INDEX erasures_pending_idx;
CREATE INDEX erasures_unfinished_idx ON erasures (id) WHERE status IN ('pending', 'failed');

-- Down Migration
DROP INDEX erasures_unfinished_idx;
CREATE INDEX erasures_pending_idx ON erasures (id) WHERE status = 'pending';
