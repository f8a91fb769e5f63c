-- Up Migration
-- The dispatch ids an idempotency record's stored response names (a registration's record, a
-- batch's records), written with the response by db/idempotency-keys.ts completeIdempotencyKey, so
-- that erasure (db/erasure.ts) finds a dispatch's records through this index instead of searching
-- every stored body for every id of its batch: that search read rows × ids (a batch of 200
-- dispatches beside 20,000 records of a day's registrations: 2–3 s inside the erasure's transaction,
-- against 31 ms by this index; bench/retention/README.md "Idempotency records").
--
-- Rows stored before this migration get theirs from their body here, once, by the same rule: every
-- UUID the body holds, lower case.
ALTER TABLE idempotency_keys ADD COLUMN dispatch_ids uuid[] NOT NULL DEFAULT '{}';
UPDATE idempotency_keys
   SET dispatch_ids = ARRAY(SELECT DISTINCT lower(m[1])::uuid
                              FROM regexp_matches(body, '([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})', 'g') AS m)
 WHERE body IS NOT NULL;
CREATE INDEX idempotency_keys_dispatch_ids_idx ON idempotency_keys USING gin (dispatch_ids);

-- Down Migration
DROP INDEX idempotency_keys_dispatch_ids_idx;
ALTER TABLE idempotency_keys DROP COLUMN dispatch_ids;
