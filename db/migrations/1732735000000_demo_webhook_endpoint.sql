-- Up Migration
-- The webhook endpoint `npm start` made for its demo issuer (cli/demo.ts): remembered apart from the
-- endpoint, so that a later start finds it again and never makes a second one, even after the user
-- removed it (then it stays removed) or the issuer's erasure deleted it. Ids only.
CREATE TABLE demo_webhook_endpoints (
  issuer_id text PRIMARY KEY REFERENCES issuers (id) ON DELETE CASCADE,
  endpoint_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE demo_webhook_endpoints;
