-- Up Migration
-- docs/webhooks.md "One driver per pending delivery": the number of the attempt a delivery's driver
-- is sending (set by its claim, or after its throttle wait; cleared when the attempt is recorded).
-- A replay that takes the delivery over while that attempt may still be in flight (its driver's
-- run budget, driver_due_at, not yet past) counts it as made and numbers its own after it, so a
-- receiver never sees one attempt number twice (db/webhooks.ts claimDelivery). NULL: none.
ALTER TABLE webhook_deliveries ADD COLUMN sending_attempt integer;

-- Down Migration
ALTER TABLE webhook_deliveries DROP COLUMN sending_attempt;
