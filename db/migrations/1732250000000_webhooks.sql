-- Up Migration
-- Webhooks (docs/webhooks.md): the endpoints an issuer subscribed, the webhook
-- events the dispatch workflow emitted (body bytes stored once, sent identically on every attempt),
-- one delivery per (webhook event, endpoint), and the log of every delivery attempt.

CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  issuer_id                   text NOT NULL REFERENCES issuers (id),
  url                         text NOT NULL,
  events                      text[] NOT NULL CHECK (cardinality(events) > 0),
  -- Stored in clear: signing (HMAC) needs the secret itself, a hash would not do. Encrypting it at
  -- rest (a KMS-wrapped key) is a later concern.
  secret                      text NOT NULL,
  -- Secret rotation: the previous secret keeps signing `webhook-signature` (beside the new one) until
  -- previous_secret_expires_at, and `X-Service-Signature` until signature_switch_at (≤ expiry).
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  signature_switch_at         timestamptz,
  -- `webhook remove` disables rather than deletes, so the delivery log keeps its endpoint.
  disabled_at                 timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL)),
  CHECK (signature_switch_at IS NULL OR signature_switch_at <= previous_secret_expires_at)
);
CREATE INDEX webhook_endpoints_issuer_idx ON webhook_endpoints (issuer_id) WHERE disabled_at IS NULL;

CREATE TABLE webhook_events (
  id               text PRIMARY KEY,
  dispatch_id      uuid NOT NULL,
  issuer_id        text NOT NULL REFERENCES issuers (id),
  mode             text NOT NULL CHECK (mode IN ('live', 'test')),
  type             text NOT NULL,
  -- the envelope's `timestamp`, fixed when the event is created
  timestamp        timestamptz NOT NULL,
  -- the exact body bytes (UTF-8 JSON) sent on every attempt; text would allow a re-encoding
  body             bytea NOT NULL,
  -- caller-chosen deterministic key (e.g. `<dispatch>:<version>:<type>`): a retried activity finds
  -- the event it already created instead of creating a second one
  idempotency_key  text UNIQUE,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_dispatch_idx ON webhook_events (dispatch_id, created_at);

CREATE TABLE webhook_deliveries (
  event_id         text NOT NULL REFERENCES webhook_events (id),
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id),
  state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'undeliverable', 'skipped')),
  -- why a delivery was skipped (endpoint removed or unsubscribed after the event was created)
  skipped_reason   text,
  attempts         integer NOT NULL DEFAULT 0,
  last_attempt_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_undeliverable_idx ON webhook_deliveries (created_at DESC) WHERE state = 'undeliverable';

-- One row per HTTP attempt. Temporal's history keeps only an activity's last attempt, so the
-- delivery activity records each one here itself. A replay starts again at attempt 1, hence the
-- surrogate key.
CREATE TABLE delivery_attempts (
  id             bigserial PRIMARY KEY,
  event_id       text NOT NULL,
  endpoint_id    text NOT NULL,
  attempt        integer NOT NULL,
  started_at     timestamptz NOT NULL,
  duration_ms    integer NOT NULL,
  status_code    integer,
  error          text,
  -- the first 512 bytes of the response body
  response_head  bytea,
  FOREIGN KEY (event_id, endpoint_id) REFERENCES webhook_deliveries (event_id, endpoint_id)
);
CREATE INDEX delivery_attempts_delivery_idx ON delivery_attempts (event_id, endpoint_id, started_at);

-- Down Migration
DROP TABLE delivery_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
