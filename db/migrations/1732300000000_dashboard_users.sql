-- Up Migration
-- The issuer dashboard (/dashboard): its users (each belongs to one issuer), their one-time
-- set-password tokens, their server-side sessions, and the sign-in attempt counters. Tokens and
-- session ids are stored only as SHA-256 hashes; passwords only as argon2id hashes.

CREATE TABLE dashboard_users (
  id               text PRIMARY KEY,
  issuer_id        text NOT NULL REFERENCES issuers (id),
  -- stored lower-cased: one account per address, whatever case it is typed in
  email            text NOT NULL UNIQUE CHECK (email = lower(email)),
  -- argon2id PHC string; NULL until the user follows their set-password link
  password_hash    text,
  password_set_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_users_issuer_idx ON dashboard_users (issuer_id);

CREATE TABLE dashboard_password_tokens (
  token_hash  bytea PRIMARY KEY,
  user_id     text NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_password_tokens_user_idx ON dashboard_password_tokens (user_id);

CREATE TABLE dashboard_sessions (
  id_hash       bytea PRIMARY KEY,
  user_id       text NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
  -- the synchronizer token every state-changing form of this session must carry
  csrf_token    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (user_id);

-- The table layout rate-limiter-flexible's Postgres store expects (created here, not by the library).
CREATE TABLE dashboard_sign_in_limits (
  key     varchar(255) PRIMARY KEY,
  points  integer NOT NULL DEFAULT 0,
  expire  bigint
);

-- Down Migration
DROP TABLE dashboard_sign_in_limits;
DROP TABLE dashboard_sessions;
DROP TABLE dashboard_password_tokens;
DROP TABLE dashboard_users;
