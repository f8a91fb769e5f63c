-- Up Migration
-- Shared history is not an attack surface (docs/predictions.md "History and its bounds"): each delivery the service records itself
-- keeps the issuer whose dispatch it was, so no issuer can weigh more than every other source of an
-- area's recent history together (db/transit-statistics.ts). Imported rows, and service rows
-- recorded before this migration, have none: the operator vouches for them.
ALTER TABLE transit_history ADD COLUMN issuer_id text REFERENCES issuers (id);
-- The country level reads its recent deliveries (the last few weeks by delivery date) with their
-- issuer from this index alone, instead of fetching every row of the country's look-back period.
CREATE INDEX transit_history_recent_idx ON transit_history (country_code, delivered_date)
  INCLUDE (dispatch_date, business_days, issuer_id);

-- Down Migration
DROP INDEX transit_history_recent_idx;
ALTER TABLE transit_history DROP COLUMN issuer_id;
