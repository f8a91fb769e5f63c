-- Up Migration
-- The retention sweep deletes a tracking feed's hourly counts past FEED_COUNTS_KEPT_HOURS
-- (db/tracking-feeds.ts deleteOldFeedCounts): oldest first, by hour, across feeds.
CREATE INDEX tracking_feed_counts_hour_idx ON tracking_feed_counts (hour);

-- Down Migration
DROP INDEX tracking_feed_counts_hour_idx;
