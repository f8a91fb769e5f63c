-- Up Migration
-- docs/webhooks.md "One driver per pending delivery" and "Replays".
--
-- Every pending delivery has exactly one driver: the delivery activity of the dispatch workflow
-- that created it (`<workflowId>/<activityId>`), or the replay / reconciler run that took it over
-- (its own token). An activity that finds the row driven by someone else stops without sending
-- (outcome `superseded`). `driver_due_at` is when the driver must next touch the row: the end of
-- the current run's time budget, or the end of the wait before its next scheduled retry. A pending
-- delivery past it by more than a few minutes has no running driver, and the reconciler re-drives it.
ALTER TABLE webhook_deliveries ADD COLUMN driver text;
ALTER TABLE webhook_deliveries ADD COLUMN driver_due_at timestamptz;
-- Retries already waiting when this runs have no due time yet: give them the longest wait of the
-- default schedule (8 h) plus the run budget, so the reconciler does not take them over early.
UPDATE webhook_deliveries SET driver_due_at = coalesce(last_attempt_at, created_at) + interval '8 hours 2 minutes'
 WHERE state = 'pending' AND attempts > 0;
CREATE INDEX webhook_deliveries_pending_due_idx ON webhook_deliveries ((coalesce(driver_due_at, created_at))) WHERE state = 'pending';

-- One row per replay (CLI `deliveries replay`, the dashboard's replays): what it matched when it
-- started and how far its redelivery workflow has got, page by page.
CREATE TABLE webhook_replays (
  id            text PRIMARY KEY,
  endpoint_id   text REFERENCES webhook_endpoints (id),
  event_id      text,
  since         timestamptz,
  until         timestamptz,
  status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
  total         integer NOT NULL,
  sent          integer NOT NULL DEFAULT 0,
  delivered     integer NOT NULL DEFAULT 0,
  failed        integer NOT NULL DEFAULT 0,
  skipped       integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz
);
CREATE INDEX webhook_replays_endpoint_idx ON webhook_replays (endpoint_id, created_at DESC);

-- Down Migration
DROP TABLE webhook_replays;
DROP INDEX webhook_deliveries_pending_due_idx;
ALTER TABLE webhook_deliveries DROP COLUMN driver_due_at;
ALTER TABLE webhook_deliveries DROP COLUMN driver;
