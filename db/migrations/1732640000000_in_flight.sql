-- Up Migration
-- The service's own registrations still on their way, read by the area statement of every
-- prediction (db/transit-statistics-sql.ts IN_FLIGHT; docs/recent-shifts.md, issue 29): live
-- undelivered dispatches by country, postal code or prefix, and dispatch date, so a prediction reads
-- its own area's recent dispatches, not its country's.
--
-- A dispatch's code and prefix as the transit history keys them are stored at registration by
-- db/dispatch-changes.ts from domain/prediction-model.ts normalisePostalCode and postalPrefixOf, the
-- one rule the history, the predictions and this lookup read: made again in SQL they disagree with it
-- outside ASCII (test/db/transit-statistics-in-flight.test.ts). Rows written before this migration get
-- them from the SQL rule below, once: the same keys for every code of letters, digits, spaces and
-- dashes. NULL only for a row that no registration wrote (benchmarks' seeds): it is then in no area's
-- in-flight count.

ALTER TABLE dispatches ADD COLUMN area_code text, ADD COLUMN area_prefix text;
UPDATE dispatches SET
  area_code = CASE WHEN country_code = 'US' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 5) ELSE upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')) END,
  area_prefix = CASE country_code
    WHEN 'GB' THEN CASE WHEN length(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g'))) > 3 THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), length(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g'))) - 3) ELSE upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')) END
    WHEN 'US' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3)
    WHEN 'CA' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3)
    WHEN 'IE' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3)
    ELSE left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 2) END;

CREATE INDEX dispatches_in_flight_code_idx ON dispatches (country_code, area_code, dispatch_date)
  WHERE status <> 'delivered' AND mode = 'live';
CREATE INDEX dispatches_in_flight_prefix_idx ON dispatches (country_code, area_prefix, dispatch_date)
  WHERE status <> 'delivered' AND mode = 'live';

-- Down Migration
DROP INDEX dispatches_in_flight_prefix_idx;
DROP INDEX dispatches_in_flight_code_idx;
ALTER TABLE dispatches DROP COLUMN area_prefix, DROP COLUMN area_code;
