-- Up Migration
-- A tracking feed's ignored checkpoints (docs/tracking-feeds.md "Ignored checkpoints", DESIGN §10:
-- "counted and listed, not refused"): what the provider sent, and why it changed nothing, kept 30
-- days (the retention sweep deletes older ones) so that an issuer can see why a checkpoint "did
-- nothing". Never applied to a dispatch (a table of its own, not a kind of unmatched checkpoint).
-- Nothing is kept of an erased dispatch's checkpoint; erasure (db/erasure.ts) removes the rows
-- naming a dispatch: by `dispatch_id`, or by its tracking number or id among the references.
CREATE TABLE feed_ignored_checkpoints (
  feed_id          text NOT NULL REFERENCES tracking_feeds (id),
  issuer_id        text NOT NULL,
  mode             text NOT NULL CHECK (mode IN ('live', 'test')),
  -- upper-case, without spaces (how matching compares it)
  tracking_number  text NOT NULL,
  carrier          text,
  -- the provider's reference fields that are dispatch ids, lower case
  references_      text[] NOT NULL DEFAULT '{}',
  -- the dispatch it matched (out_of_bounds, dispatch_closed); NULL when ignored before matching
  dispatch_id      uuid,
  event_id         text NOT NULL,
  -- the provider's own status and sub-status, and the checkpoint's time as written (NULL: none given)
  status           text NOT NULL,
  substatus        text,
  original_time    text,
  reason           text NOT NULL CHECK (reason IN ('no_status_mapping', 'no_time', 'out_of_bounds', 'dispatch_closed')),
  message          text NOT NULL,
  received_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (feed_id, tracking_number, event_id)
);
CREATE INDEX feed_ignored_received_idx ON feed_ignored_checkpoints (feed_id, received_at DESC);
CREATE INDEX feed_ignored_expiry_idx ON feed_ignored_checkpoints (received_at);
CREATE INDEX feed_ignored_tracking_idx ON feed_ignored_checkpoints (issuer_id, mode, tracking_number);
CREATE INDEX feed_ignored_references_idx ON feed_ignored_checkpoints USING gin (references_);
CREATE INDEX feed_ignored_dispatch_idx ON feed_ignored_checkpoints (dispatch_id) WHERE dispatch_id IS NOT NULL;

-- Down Migration
DROP TABLE feed_ignored_checkpoints;
