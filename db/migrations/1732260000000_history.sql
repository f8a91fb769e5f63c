-- Up Migration
-- Prediction inputs (docs/predictions.md): the transit history the model learns from (imported
-- CSV files and, later, the service's own completed deliveries) and the carrier conditions an
-- operator declares. Transit is stored already counted in business days of the destination country
-- (domain/calendar.ts), so the model's query is plain SQL over integers.

CREATE TABLE transit_history (
  id              bigserial PRIMARY KEY,
  postal_code     text NOT NULL,
  country_code    text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
  -- the country's postal prefix (domain/prediction-model.ts postalPrefixOf), kept so lookups by
  -- prefix use an index instead of an expression
  postal_prefix   text NOT NULL,
  dispatch_date   date NOT NULL,
  delivered_date  date NOT NULL CHECK (delivered_date >= dispatch_date),
  -- business days from the first business day on or after dispatch to delivery
  business_days   integer NOT NULL CHECK (business_days >= 0),
  source          text NOT NULL CHECK (source IN ('import', 'service')),
  -- the dispatch a 'service' row came from: a retried activity records its delivery once
  dispatch_id     uuid UNIQUE,
  imported_at     timestamptz NOT NULL DEFAULT now()
);
-- loadTransitStatistics reads one country's recent history, grouped by postal code and prefix: the
-- INCLUDE columns let it answer from the index alone.
CREATE INDEX transit_history_country_idx ON transit_history (country_code, dispatch_date)
  INCLUDE (postal_prefix, postal_code, delivered_date, business_days);
CREATE INDEX transit_history_postal_code_idx ON transit_history (country_code, postal_code, dispatch_date);
CREATE INDEX transit_history_prefix_idx ON transit_history (country_code, postal_prefix, dispatch_date);

CREATE TABLE carrier_conditions (
  id             text PRIMARY KEY,
  country_code   text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
  -- null: the whole country
  postal_prefix  text,
  delay_days     integer NOT NULL CHECK (delay_days > 0),
  -- last day the delay applies (inclusive); null: until cleared
  until          date,
  created_at     timestamptz NOT NULL DEFAULT now(),
  cleared_at     timestamptz
);
CREATE INDEX carrier_conditions_active_idx ON carrier_conditions (country_code) WHERE cleared_at IS NULL;

-- Down Migration
DROP TABLE carrier_conditions;
DROP TABLE transit_history;
