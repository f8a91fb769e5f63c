-- Up Migration
-- Issuers, their API keys (hash only), the dispatch projection the API reads, the carrier event log,
-- and the fixed-window rate-limit counters shared by every API process.

CREATE TABLE issuers (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  issuer_id     text NOT NULL REFERENCES issuers (id),
  -- the first characters of the key's random part: lets the key be found without storing it
  lookup        text NOT NULL UNIQUE,
  -- SHA-256 of the whole key; the key itself is never stored
  key_hash      bytea NOT NULL,
  scopes        text[] NOT NULL,
  mode          text NOT NULL CHECK (mode IN ('live', 'test')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz,
  last_used_at  timestamptz
);
CREATE INDEX api_keys_issuer_idx ON api_keys (issuer_id);

-- The projection of each dispatch workflow. Written only by the workflow's activity, monotonic by
-- version: a write with an older version never overwrites a newer one.
CREATE TABLE dispatches (
  id                  uuid PRIMARY KEY,
  issuer_id           text NOT NULL REFERENCES issuers (id),
  mode                text NOT NULL CHECK (mode IN ('live', 'test')),
  version             bigint NOT NULL,
  status              text NOT NULL,
  dispatch_date       timestamptz NOT NULL,
  postal_code         text NOT NULL,
  country_code        char(2) NOT NULL,
  locale              text,
  carrier             text,
  tracking_number     text,
  reference           text,
  -- canonical registration body, compared on a repeated registration (idempotency)
  registration        jsonb NOT NULL,
  window_min          date NOT NULL,
  window_max          date NOT NULL,
  confidence_level    text NOT NULL,
  exception_reason    text,
  -- the status record exactly as GET /v1/status returns it, in the dispatch's own locale
  record              json NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dispatches_issuer_created_idx ON dispatches (issuer_id, mode, created_at DESC, id DESC);
CREATE INDEX dispatches_open_idx ON dispatches (country_code) WHERE status <> 'delivered';

-- Every carrier event received, in arrival order, including duplicates' first copy and stale ones.
CREATE TABLE carrier_events (
  dispatch_id   uuid NOT NULL,
  dedupe_key    text NOT NULL,
  event_id      text,
  status        text NOT NULL,
  occurred_at   timestamptz NOT NULL,
  reason        text,
  location      text,
  received_at   timestamptz NOT NULL DEFAULT now(),
  -- what the workflow did with it: applied, exception_repeated, stale, after_delivery, unchanged
  effect        text,
  PRIMARY KEY (dispatch_id, dedupe_key)
);

CREATE TABLE rate_limit_windows (
  subject       text NOT NULL,
  window_start  bigint NOT NULL,
  count         integer NOT NULL,
  PRIMARY KEY (subject, window_start)
) WITH (fillfactor = 50);

-- Down Migration
DROP TABLE rate_limit_windows;
DROP TABLE carrier_events;
DROP TABLE dispatches;
DROP TABLE api_keys;
DROP TABLE issuers;
