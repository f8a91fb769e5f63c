-- Up Migration
-- The dispatch ids an idempotency record's stored response names (a registration's record, a
-- batch's records), so that erasure (db/erasure.ts) finds a dispatch's records through an index
-- instead of searching every stored body for every id of its batch: that search read rows × ids (a
-- batch of 200 dispatches beside 20,000 records of a day's registrations: 2–3 s inside the
-- erasure's transaction, against 31 ms by this index; bench/retention/README.md "Idempotency
-- records").
--
-- A generated column: the database derives it from the body on every write, whoever writes (an API
-- process of the release before this one, during a rolling deploy, too), and for the rows already
-- stored when it is added. The rule: every UUID the body holds, lower case (a superset of the
-- dispatches it names; a row erased with another UUID's dispatch is no loss, it expires in a day).
CREATE FUNCTION uuids_in(body text) RETURNS uuid[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT coalesce(array_agg(DISTINCT lower(m[1])::uuid), '{}')
      FROM regexp_matches(body, '([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})', 'g') AS m
  $$;
ALTER TABLE idempotency_keys ADD COLUMN dispatch_ids uuid[] GENERATED ALWAYS AS (uuids_in(body)) STORED;
CREATE INDEX idempotency_keys_dispatch_ids_idx ON idempotency_keys USING gin (dispatch_ids);

-- Down Migration
DROP INDEX idempotency_keys_dispatch_ids_idx;
ALTER TABLE idempotency_keys DROP COLUMN dispatch_ids;
DROP FUNCTION uuids_in(text);
