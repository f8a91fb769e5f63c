-- Up Migration
-- Dashboard Settings → Webhooks and the delivery log (docs/dashboard.md "Dashboard").
--
-- Disabling an endpoint is a pause, distinct from removal (`disabled_at`, which means removed and
-- keeps the row only for the log): a paused endpoint keeps its secret, events and place in the
-- per-issuer limit, but gets no new delivery, and its pending retries are skipped at their next
-- attempt (see docs/dashboard.md "Dashboard").
ALTER TABLE webhook_endpoints ADD COLUMN paused_at timestamptz;

-- A synthetic event sent from the dashboard's "Send test event" (a sample status record, no dispatch).
ALTER TABLE webhook_events ADD COLUMN test_event boolean NOT NULL DEFAULT false;

-- Each attempt keeps what the delivery became after it ('delivered', 'pending' = failed with a
-- retry to come, 'undeliverable' = failed, no retry left), and the headers it was sent with
-- (signatures, timestamps: no secret), so the log can show the signature a consumer received.
ALTER TABLE delivery_attempts ADD COLUMN state_after text CHECK (state_after IN ('delivered', 'pending', 'undeliverable'));
ALTER TABLE delivery_attempts ADD COLUMN request_headers jsonb;
UPDATE delivery_attempts SET state_after = CASE WHEN error IS NULL THEN 'delivered' ELSE 'pending' END;
UPDATE delivery_attempts a SET state_after = 'undeliverable'
  FROM webhook_deliveries d
 WHERE d.event_id = a.event_id AND d.endpoint_id = a.endpoint_id AND d.state = 'undeliverable' AND a.error IS NOT NULL
   AND a.id = (SELECT max(id) FROM delivery_attempts l WHERE l.event_id = a.event_id AND l.endpoint_id = a.endpoint_id);
ALTER TABLE delivery_attempts ALTER COLUMN state_after SET NOT NULL;

-- The delivery log pages one endpoint's attempts newest first; health reads its recent attempts.
CREATE INDEX delivery_attempts_endpoint_idx ON delivery_attempts (endpoint_id, id DESC);
CREATE INDEX delivery_attempts_endpoint_started_idx ON delivery_attempts (endpoint_id, started_at);

-- Down Migration
DROP INDEX delivery_attempts_endpoint_started_idx;
DROP INDEX delivery_attempts_endpoint_idx;
ALTER TABLE delivery_attempts DROP COLUMN request_headers;
ALTER TABLE delivery_attempts DROP COLUMN state_after;
ALTER TABLE webhook_events DROP COLUMN test_event;
ALTER TABLE webhook_endpoints DROP COLUMN paused_at;
