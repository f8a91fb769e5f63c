-- Up Migration
-- Webhook endpoints, events and replays as an API (docs/webhooks.md "Webhook endpoints").
--
-- An endpoint's own settings: a description for people, custom headers sent on every attempt (e.g.
-- a token for the consumer's gateway: never logged, never recorded with the attempt, masked in every
-- API answer after creation) and `rate_limit`, deliveries per second (stored; not yet enforced).
ALTER TABLE webhook_endpoints
  ADD COLUMN description text,
  ADD COLUMN headers jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(headers) = 'object'),
  ADD COLUMN rate_limit integer CHECK (rate_limit > 0);

-- GET /v1/events pages an issuer's events of one mode, newest first.
CREATE INDEX webhook_events_issuer_idx ON webhook_events (issuer_id, mode, created_at DESC, id DESC);

-- New scopes webhooks:read and webhooks:write. A key created without --scopes had every scope there
-- was, so a key holding all three earlier scopes gains the two new ones. (A key given those three
-- explicitly cannot be told apart from it and gains them too: docs/http-contract.md "Scopes".)
UPDATE api_keys SET scopes = scopes || ARRAY['webhooks:read', 'webhooks:write']
 WHERE scopes @> ARRAY['status:read', 'dispatches:write', 'events:write']
   AND NOT scopes && ARRAY['webhooks:read', 'webhooks:write'];

-- Down Migration
UPDATE api_keys SET scopes = array_remove(array_remove(scopes, 'webhooks:read'), 'webhooks:write');
DROP INDEX webhook_events_issuer_idx;
ALTER TABLE webhook_endpoints DROP COLUMN rate_limit, DROP COLUMN headers, DROP COLUMN description;
