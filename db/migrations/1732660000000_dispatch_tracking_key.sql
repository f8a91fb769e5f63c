-- Up Migration
-- A dispatch's tracking number as tracking feeds match it, stored at registration by
-- db/dispatch-changes.ts from domain/tracking-feeds/provider.ts normaliseTrackingNumber (upper case,
-- no whitespace: the rule the inbound checkpoints are keyed by), instead of made again in SQL by
-- the match (db/feed-checkpoints.ts), the erasure of unmatched checkpoints (db/erasure.ts) and the
-- index of 1732610000000_tracking_feeds.sql, which disagreed with it on a no-break space or a letter
-- outside ASCII (test/db/feed-matching.test.ts): such a card's checkpoints stayed unmatched, and an
-- erasure left them behind.
--
-- Rows written before this migration get it from the SQL rule below, once: the same key for every
-- tracking number of ASCII letters, digits and spaces. NULL without a tracking number, and for a row
-- that no registration wrote (benchmarks' seeds).

ALTER TABLE dispatches ADD COLUMN tracking_key text;
UPDATE dispatches SET tracking_key = upper(regexp_replace(tracking_number, '\s', '', 'g')) WHERE tracking_number IS NOT NULL;
DROP INDEX dispatches_tracking_number_idx;
CREATE INDEX dispatches_tracking_key_idx ON dispatches (issuer_id, mode, tracking_key) WHERE tracking_key IS NOT NULL;

-- Down Migration
DROP INDEX dispatches_tracking_key_idx;
CREATE INDEX dispatches_tracking_number_idx
  ON dispatches (issuer_id, mode, (upper(regexp_replace(tracking_number, '\s', '', 'g'))))
  WHERE tracking_number IS NOT NULL;
ALTER TABLE dispatches DROP COLUMN tracking_key;
