-- Up Migration
-- A dispatch's postal code and prefix as the transit history keys them, stored at registration by
-- db/dispatch-changes.ts from domain/prediction-model.ts normalisePostalCode and postalPrefixOf
-- (the one rule: the history, the predictions and the in-flight lookup all read it), instead of
-- made again in SQL by the lookup and its indexes (1732640000000_in_flight.sql), which disagreed
-- with it on postal codes outside ASCII (test/db/postal-normalisation.test.ts).
--
-- Rows written before this migration get them from the SQL rule below, once: the same keys for
-- every code of letters, digits, spaces and dashes. NULL only for a row that no registration wrote
-- (benchmarks' seeds): it is then in no area's in-flight count.

ALTER TABLE dispatches ADD COLUMN area_code text, ADD COLUMN area_prefix text;
UPDATE dispatches SET
  area_code = CASE WHEN country_code = 'US' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 5) ELSE upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')) END,
  area_prefix = CASE country_code
    WHEN 'GB' THEN CASE WHEN length(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g'))) > 3 THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), length(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g'))) - 3) ELSE upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')) END
    WHEN 'US' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3)
    WHEN 'CA' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3)
    WHEN 'IE' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3)
    ELSE left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 2) END;

DROP INDEX dispatches_in_flight_code_idx;
DROP INDEX dispatches_in_flight_prefix_idx;
CREATE INDEX dispatches_in_flight_code_idx ON dispatches (country_code, area_code, dispatch_date)
  WHERE status <> 'delivered' AND mode = 'live';
CREATE INDEX dispatches_in_flight_prefix_idx ON dispatches (country_code, area_prefix, dispatch_date)
  WHERE status <> 'delivered' AND mode = 'live';

-- Down Migration
DROP INDEX dispatches_in_flight_prefix_idx;
DROP INDEX dispatches_in_flight_code_idx;
CREATE INDEX dispatches_in_flight_code_idx ON dispatches (country_code, (CASE WHEN country_code = 'US' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 5) ELSE upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')) END), dispatch_date)
  WHERE status <> 'delivered' AND mode = 'live';
CREATE INDEX dispatches_in_flight_prefix_idx ON dispatches (country_code, (CASE country_code WHEN 'GB' THEN CASE WHEN length(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g'))) > 3 THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), length(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g'))) - 3) ELSE upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')) END WHEN 'US' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3) WHEN 'CA' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3) WHEN 'IE' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3) ELSE left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 2) END), dispatch_date)
  WHERE status <> 'delivered' AND mode = 'live';
ALTER TABLE dispatches DROP COLUMN area_prefix, DROP COLUMN area_code;
