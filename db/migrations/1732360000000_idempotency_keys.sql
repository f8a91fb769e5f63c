-- Up Migration
-- Idempotency-Key on POST /v1/dispatches and /batch (docs/http-contract.md "Idempotency-Key"): one
-- row per (issuer, mode, key), claimed before the request runs (status_code NULL: in flight) and
-- completed with the response to replay. In Postgres so that it holds across API processes.
-- Rows older than 24 hours are expired: taken over by a new request with the same key, and deleted
-- opportunistically by the API (db/idempotency-keys.ts deleteExpiredIdempotencyKeys).
CREATE TABLE idempotency_keys (
  issuer_id      text NOT NULL,
  mode           text NOT NULL CHECK (mode IN ('live', 'test')),
  key            text NOT NULL,
  -- SHA-256 (hex) of the method, the path and the canonical JSON of the body
  request_hash   text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  -- when the request that holds the key started; a claim older than the lease may be taken over
  locked_at      timestamptz NOT NULL DEFAULT now(),
  -- the first response, once there is one: replayed as is
  status_code    integer,
  headers        jsonb,
  body           text,
  PRIMARY KEY (issuer_id, mode, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Down Migration
DROP TABLE idempotency_keys;
