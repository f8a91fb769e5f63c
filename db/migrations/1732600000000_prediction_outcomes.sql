-- Up Migration
-- The published accuracy (docs/prediction-quality.md "Quality"): one outcome per delivered dispatch,
-- kept when the card is delivered, by the same statement that writes the delivered version of its
-- projection (db/dispatch-changes.ts), so a retried write keeps it once. It is what
-- `predictions quality` and the dashboard's Prediction quality page read (db/predictions.ts).
--
-- It names no dispatch and holds no personal data (no postal code, tracking number, reference or
-- location): an erased dispatch's outcome stays and still counts. Nor does it reference issuers, so
-- nothing about an issuer's removal has to reach it.
--
-- Every delivery counts, whenever it was registered or reported: the rules that keep late,
-- back-dated or implausible deliveries out of the model's history (db/transit-history.ts) never
-- remove one from the report; `learned` and `not_learned_reasons` say whether the model learned from
-- it and, if not, why (domain/vocabulary.ts NOT_LEARNED_REASONS; a delivery may have several).
CREATE TABLE prediction_outcomes (
  id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  issuer_id            text NOT NULL,
  mode                 text NOT NULL CHECK (mode IN ('live', 'test')),
  country_code         char(2) NOT NULL,
  -- the UTC date the card was dispatched (`predictions quality --since` counts by it)
  dispatch_date        date NOT NULL,
  -- the prediction served at registration (the projection's version 1)
  confidence_level     text NOT NULL CHECK (confidence_level IN ('High', 'Medium', 'Low')),
  window_min           date NOT NULL,
  window_max           date NOT NULL,
  delivered_date       date NOT NULL,
  -- a test-mode delivery never teaches the model (not learned, no reason: it is not a carrier's)
  learned              boolean NOT NULL,
  not_learned_reasons  text[] NOT NULL DEFAULT '{}'
    CHECK (not_learned_reasons <@ ARRAY['late_registration', 'late_report', 'delivered_before_dispatch', 'implausible']),
  CHECK (NOT learned OR cardinality(not_learned_reasons) = 0)
);
CREATE INDEX prediction_outcomes_issuer_idx ON prediction_outcomes (issuer_id, mode, dispatch_date);

-- The dispatches delivered before this migration, with the window logged at their registration
-- (those registered before the prediction log existed have none and stay out, as they did). Learned
-- when the history holds their row; otherwise the reasons the rules give today, and `implausible`
-- when no other applies (the country's bound at the time is not kept).
INSERT INTO prediction_outcomes (issuer_id, mode, country_code, dispatch_date, confidence_level, window_min, window_max,
                                 delivered_date, learned, not_learned_reasons)
SELECT d.issuer_id, d.mode, d.country_code, (d.dispatch_date AT TIME ZONE 'UTC')::date, p.confidence_level,
       p.window_min, p.window_max, d.window_min, j.learned,
       CASE WHEN j.learned OR d.mode = 'test' THEN '{}'::text[]
            WHEN cardinality(j.reasons) = 0 THEN ARRAY['implausible']
            ELSE j.reasons END
  FROM dispatches d
  JOIN prediction_log p ON p.dispatch_id = d.id AND p.version = 1
  CROSS JOIN LATERAL (
    SELECT d.mode = 'live' AND EXISTS (SELECT 1 FROM transit_history h WHERE h.dispatch_id = d.id) AS learned,
           array_remove(ARRAY[
             CASE WHEN d.created_at > d.dispatch_date + interval '3 days' THEN 'late_registration' END,
             CASE WHEN NOT EXISTS (SELECT 1 FROM carrier_events e
                                    WHERE e.dispatch_id = d.id AND e.status = 'delivered'
                                      AND (e.occurred_at AT TIME ZONE 'UTC')::date = d.window_min
                                      AND e.received_at <= e.occurred_at + interval '3 days') THEN 'late_report' END,
             CASE WHEN d.window_min < (d.dispatch_date AT TIME ZONE 'UTC')::date THEN 'delivered_before_dispatch' END
           ], NULL) AS reasons
  ) j
 WHERE d.status = 'delivered';

-- Down Migration
DROP TABLE prediction_outcomes;
