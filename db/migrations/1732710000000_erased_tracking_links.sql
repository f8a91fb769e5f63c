-- Up Migration
-- The tokens (as their SHA-256, as tracking_links keeps them) of the tracking links of erased
-- dispatches, so that such a link answers the 404 page saying the card's tracking was erased
-- (DESIGN §11) rather than "link not found". No dispatch id, nothing of the card: a hash of a random
-- token and when the link would have expired. Deleted 30 days after that, as expired links are
-- (db/retention.ts deleteExpiredTrackingLinks).
CREATE TABLE erased_tracking_links (
  token_hash  bytea PRIMARY KEY,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX erased_tracking_links_expires_idx ON erased_tracking_links (expires_at);

-- Down Migration
DROP TABLE erased_tracking_links;
