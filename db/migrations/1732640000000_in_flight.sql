-- Up Migration
-- The service's own registrations still on their way, read by the area statement of every
-- prediction (db/transit-statistics-sql.ts IN_FLIGHT; docs/predictions.md "Recent shifts and
-- maturity", issue 29): live undelivered dispatches by country, postal code or prefix (normalised
-- as the transit history stores them, the same expressions as DISPATCH_CODE and DISPATCH_PREFIX),
-- and dispatch date, so a prediction reads its own area's recent dispatches, not its country's.

CREATE INDEX dispatches_in_flight_code_idx ON dispatches (country_code, (CASE WHEN country_code = 'US' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 5) ELSE upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')) END), dispatch_date)
  WHERE status <> 'delivered' AND mode = 'live';
CREATE INDEX dispatches_in_flight_prefix_idx ON dispatches (country_code, (CASE country_code WHEN 'GB' THEN CASE WHEN length(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g'))) > 3 THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), length(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g'))) - 3) ELSE upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')) END WHEN 'US' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3) WHEN 'CA' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3) WHEN 'IE' THEN left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 3) ELSE left(upper(regexp_replace(postal_code, '[[:space:]-]', '', 'g')), 2) END), dispatch_date)
  WHERE status <> 'delivered' AND mode = 'live';

-- Down Migration
DROP INDEX dispatches_in_flight_prefix_idx;
DROP INDEX dispatches_in_flight_code_idx;
