-- Up Migration
-- docs/webhooks.md "Replays": a replay's progress is added once per page. Each page is one run of
-- its redelivery workflow (it continues as new between pages), so the run that added the last page
-- is kept, and a retried progress activity of that run adds nothing again (db/webhook-replays.ts
-- addReplayProgress). The running replays are what the reconciler looks at for one whose workflow
-- closed without completing (activities/redelivery.ts).
ALTER TABLE webhook_replays ADD COLUMN progress_run_id text;
CREATE INDEX webhook_replays_running_idx ON webhook_replays (created_at) WHERE status = 'running';

-- Down Migration
DROP INDEX webhook_replays_running_idx;
ALTER TABLE webhook_replays DROP COLUMN progress_run_id;
