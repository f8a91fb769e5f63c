-- Up Migration
-- A dashboard form that creates something (a tracking feed, an API key, a webhook endpoint) carries a
-- one-time value; the first request with it claims it here and creates, and a second one (a double
-- click, a reload) is sent where the first went instead of creating again (dashboard/submit-once.ts).
-- `sealed` holds what the result page shows once (a new key, a Shippo feed's token URL), encrypted
-- with a key derived from the session's cookie value, which the database never holds; it is cleared
-- once shown and after 10 minutes, and the row goes with its session.
CREATE TABLE dashboard_form_submissions (
  session_hash  bytea NOT NULL REFERENCES dashboard_sessions (id_hash) ON DELETE CASCADE,
  nonce         text NOT NULL,
  location      text,
  sealed        bytea,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_hash, nonce)
);
CREATE INDEX dashboard_form_submissions_created_idx ON dashboard_form_submissions (created_at);

-- Down Migration
DROP TABLE dashboard_form_submissions;
