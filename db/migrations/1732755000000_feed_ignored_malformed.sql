-- Up Migration
-- A feed's ignored checkpoint may be `malformed`: its tracking is not the provider's shape though the
-- body around it is (one tracking of Ship24's grouped webhook), so it is listed, and the body's other
-- trackings still apply, rather than the whole body refused (docs/tracking-feeds.md "Ignored checkpoints").
ALTER TABLE feed_ignored_checkpoints DROP CONSTRAINT feed_ignored_checkpoints_reason_check;
ALTER TABLE feed_ignored_checkpoints ADD CONSTRAINT feed_ignored_checkpoints_reason_check
  CHECK (reason IN ('no_status_mapping', 'no_time', 'malformed', 'out_of_bounds', 'dispatch_closed'));

-- Down Migration
DELETE FROM feed_ignored_checkpoints WHERE reason = 'malformed';
ALTER TABLE feed_ignored_checkpoints DROP CONSTRAINT feed_ignored_checkpoints_reason_check;
ALTER TABLE feed_ignored_checkpoints ADD CONSTRAINT feed_ignored_checkpoints_reason_check
  CHECK (reason IN ('no_status_mapping', 'no_time', 'out_of_bounds', 'dispatch_closed'));
