-- Up Migration
-- When `issuer erase` erased the issuer (db/issuer-erasure.ts): its row stays, so that its id is not
-- reused, and from then on it takes no new API key, dashboard user or webhook endpoint.
ALTER TABLE issuers ADD COLUMN erased_at timestamptz;

-- Down Migration
ALTER TABLE issuers DROP COLUMN erased_at;
