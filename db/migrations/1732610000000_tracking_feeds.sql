-- Up Migration
-- Tracking feeds (docs/tracking-feeds.md, DESIGN §10): an aggregator's webhook pointed at
-- POST /v1/inbound/{feed_id}. The feed with the provider's secret (or the generated Shippo token,
-- needed in clear to compare the request's token in constant time), the hourly counts behind the
-- API's last-24-hours `counts`, and the checkpoints no dispatch matched yet (kept 30 days, deleted
-- the moment one is applied to a registered dispatch: no table here holds a dispatch id).

CREATE TABLE tracking_feeds (
  id                text PRIMARY KEY,
  issuer_id         text NOT NULL REFERENCES issuers (id),
  mode              text NOT NULL CHECK (mode IN ('live', 'test')),
  provider          text NOT NULL,
  secret            text NOT NULL,
  description       text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  last_received_at  timestamptz,
  revoked_at        timestamptz
);
CREATE INDEX tracking_feeds_issuer_idx ON tracking_feeds (issuer_id, mode, created_at DESC, id DESC);

-- One row per feed and hour: the API sums the last 24 (one upsert per inbound request).
CREATE TABLE tracking_feed_counts (
  feed_id       text NOT NULL REFERENCES tracking_feeds (id),
  hour          timestamptz NOT NULL,
  received      integer NOT NULL DEFAULT 0,
  applied       integer NOT NULL DEFAULT 0,
  duplicate     integer NOT NULL DEFAULT 0,
  unmatched     integer NOT NULL DEFAULT 0,
  ignored       integer NOT NULL DEFAULT 0,
  unauthorized  integer NOT NULL DEFAULT 0,
  PRIMARY KEY (feed_id, hour)
);

CREATE TABLE feed_unmatched_checkpoints (
  feed_id          text NOT NULL REFERENCES tracking_feeds (id),
  issuer_id        text NOT NULL,
  mode             text NOT NULL CHECK (mode IN ('live', 'test')),
  -- upper-case, without spaces (how matching compares it)
  tracking_number  text NOT NULL,
  carrier          text,
  -- the provider's reference fields, candidate dispatch ids as sent
  references_      text[] NOT NULL DEFAULT '{}',
  event_id         text NOT NULL,
  status           text NOT NULL,
  reason           text,
  location         text,
  -- the checkpoint's time as the provider gave it (domain/tracking-feeds CheckpointTime): a local time
  -- is resolved in the dispatch's zone once one matches
  time             jsonb NOT NULL,
  original         jsonb NOT NULL,
  received_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (feed_id, tracking_number, event_id)
);
CREATE INDEX feed_unmatched_tracking_idx ON feed_unmatched_checkpoints (issuer_id, mode, tracking_number);
CREATE INDEX feed_unmatched_references_idx ON feed_unmatched_checkpoints USING gin (references_);
CREATE INDEX feed_unmatched_received_idx ON feed_unmatched_checkpoints (feed_id, received_at DESC);

-- Matching a tracking number to a dispatch: compared upper-case without whitespace.
CREATE INDEX dispatches_tracking_number_idx
  ON dispatches (issuer_id, mode, (upper(regexp_replace(tracking_number, '\s', '', 'g'))))
  WHERE tracking_number IS NOT NULL;

-- A feed's checkpoint keeps, beside the provider's status (vocabulary_status), its sub-status and
-- its time exactly as the provider wrote it (a local time without offset is resolved in a zone).
ALTER TABLE carrier_events ADD COLUMN vocabulary_substatus text, ADD COLUMN original_time text;

-- Down Migration
ALTER TABLE carrier_events DROP COLUMN vocabulary_substatus, DROP COLUMN original_time;
DROP INDEX dispatches_tracking_number_idx;
DROP TABLE feed_unmatched_checkpoints;
DROP TABLE tracking_feed_counts;
DROP TABLE tracking_feeds;
