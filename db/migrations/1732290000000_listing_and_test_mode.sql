-- Up Migration
-- GET /v1/dispatches and test mode (docs/http-contract.md "GET /v1/dispatches (list)", "Test mode").
--
-- The list reads one issuer's dispatches of one mode, newest first, by keyset on (created_at, id);
-- the foundation's dispatches_issuer_created_idx serves it unfiltered. A filter on status or
-- destination country would otherwise walk that index past every non-matching row, so each gets
-- an index that keeps the same order after the filter column.
CREATE INDEX dispatches_issuer_status_created_idx ON dispatches (issuer_id, mode, status, created_at DESC, id DESC);
CREATE INDEX dispatches_issuer_country_created_idx ON dispatches (issuer_id, mode, country_code, created_at DESC, id DESC);

-- Webhook endpoints have a mode, as API keys and dispatches do: a test-mode dispatch's events go
-- only to the issuer's test endpoints, a live one's only to live endpoints. Existing endpoints are live.
ALTER TABLE webhook_endpoints ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));

-- Down Migration
ALTER TABLE webhook_endpoints DROP COLUMN mode;
DROP INDEX dispatches_issuer_country_created_idx;
DROP INDEX dispatches_issuer_status_created_idx;
