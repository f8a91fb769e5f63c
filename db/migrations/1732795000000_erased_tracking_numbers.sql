-- Up Migration
-- The tracking numbers of erased dispatches, as the SHA-256 of the number as matching compares it
-- (dispatches.tracking_key), with the issuer and mode: an aggregator that goes on reporting the card
-- names it only by that number, and its checkpoints are then ignored and stored nowhere (DESIGN §11),
-- instead of being kept as unmatched for 30 days. No dispatch id, nothing else of the card. Deleted
-- once `expires_at` (30 days after the erasure) has passed (db/retention.ts deleteExpiredTrackingLinks).
CREATE TABLE erased_tracking_numbers (
  issuer_id    text NOT NULL,
  mode         text NOT NULL,
  number_hash  bytea NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (issuer_id, mode, number_hash)
);
CREATE INDEX erased_tracking_numbers_expires_idx ON erased_tracking_numbers (expires_at);

-- Down Migration
DROP TABLE erased_tracking_numbers;
