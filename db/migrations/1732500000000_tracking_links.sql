-- Up Migration
-- The cardholder's tracking page (docs/tracking-page.md "Tracking links and the tracking page"):
-- links per dispatch (the token only as its SHA-256), each issuer's branding of the page, the
-- wrong postal codes of a gated link (its limit) and the passes a right code gave (the gate's cookie,
-- also only as a SHA-256).

CREATE TABLE tracking_links (
  id                   text PRIMARY KEY,
  dispatch_id          uuid NOT NULL REFERENCES dispatches (id),
  issuer_id            text NOT NULL REFERENCES issuers (id),
  mode                 text NOT NULL CHECK (mode IN ('live', 'test')),
  -- SHA-256 of the token; the token itself is shown once and never stored
  token_hash           bytea NOT NULL UNIQUE,
  locale               text,
  require_postal_code  boolean NOT NULL DEFAULT false,
  expires_at           timestamptz NOT NULL,
  created_at           timestamptz NOT NULL DEFAULT now(),
  revoked_at           timestamptz
);
CREATE INDEX tracking_links_dispatch_idx ON tracking_links (dispatch_id, created_at DESC, id DESC);

CREATE TABLE tracking_page_branding (
  issuer_id       text PRIMARY KEY REFERENCES issuers (id),
  display_name    text,
  accent_color    text,
  activation_url  text,
  support_url     text,
  support_phone   text,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tracking_gate_failures (
  link_id    text NOT NULL REFERENCES tracking_links (id) ON DELETE CASCADE,
  failed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tracking_gate_failures_link_idx ON tracking_gate_failures (link_id, failed_at);

CREATE TABLE tracking_gate_passes (
  pass_hash   bytea PRIMARY KEY,
  link_id     text NOT NULL REFERENCES tracking_links (id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX tracking_gate_passes_expiry_idx ON tracking_gate_passes (expires_at);

-- Down Migration
DROP TABLE tracking_gate_passes;
DROP TABLE tracking_gate_failures;
DROP TABLE tracking_page_branding;
DROP TABLE tracking_links;
