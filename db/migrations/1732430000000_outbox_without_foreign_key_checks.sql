-- Up Migration
-- The carrier event path (docs/architecture.md "The path of one carrier event") writes these rows
-- on every event, and each foreign key costs a lookup per row (an RI trigger's SELECT … FOR KEY
-- SHARE, counted by pg_stat_statements and measured in bench/event-cost). None of them can fail:
-- every writer derives the referencing row from the referenced one in the same statement
-- (db/projection-outbox.ts joins the issuer's endpoints and inserts the events it names; the
-- attempt record updates the delivery it logs), and none of the referenced rows is ever deleted
-- (issuers, dispatches, endpoints and events are kept; an endpoint is removed by `disabled_at`).
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_issuer_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_event_id_endpoint_id_fkey;
ALTER TABLE prediction_log DROP CONSTRAINT prediction_log_dispatch_id_fkey;

-- Down Migration
ALTER TABLE prediction_log ADD CONSTRAINT prediction_log_dispatch_id_fkey FOREIGN KEY (dispatch_id) REFERENCES dispatches (id) ON DELETE CASCADE;
ALTER TABLE delivery_attempts ADD CONSTRAINT delivery_attempts_event_id_endpoint_id_fkey FOREIGN KEY (event_id, endpoint_id) REFERENCES webhook_deliveries (event_id, endpoint_id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES webhook_events (id);
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_issuer_id_fkey FOREIGN KEY (issuer_id) REFERENCES issuers (id);
