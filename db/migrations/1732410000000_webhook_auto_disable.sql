-- Up Migration
-- Auto-disable (docs/webhooks.md "Auto-disable"): an endpoint that has failed every attempt for
-- WEBHOOK_AUTO_DISABLE_AFTER (5 days) is paused with the reason `failing`.
--
-- failing_since: the first failed attempt after the last successful one (null after a success, or
-- before any attempt); cleared again when the endpoint is enabled. paused_reason: why paused_at is
-- set, `manual` (the API, the dashboard) or `failing` (auto-disabled); null while enabled.
ALTER TABLE webhook_endpoints
  ADD COLUMN failing_since timestamptz,
  ADD COLUMN paused_reason text CHECK (paused_reason IN ('manual', 'failing'));
UPDATE webhook_endpoints SET paused_reason = 'manual' WHERE paused_at IS NOT NULL;

-- Down Migration
ALTER TABLE webhook_endpoints DROP COLUMN paused_reason, DROP COLUMN failing_since;
