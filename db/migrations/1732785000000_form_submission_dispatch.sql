-- Up Migration
-- A dashboard form that created a tracking link leads to its dispatch's page, so its claim names the
-- dispatch (`location` holds the path). `dispatch_id` says which, so that erasure removes the claim
-- with the dispatch's other rows (db/erasure.ts ERASED_TABLES; test/db/erasure-catalogue.test.ts finds
-- the column), and `dispatch footprint` counts it. NULL for the forms that create nothing of a dispatch.
ALTER TABLE dashboard_form_submissions ADD COLUMN dispatch_id uuid;
CREATE INDEX dashboard_form_submissions_dispatch_idx ON dashboard_form_submissions (dispatch_id) WHERE dispatch_id IS NOT NULL;

-- Down Migration
DROP INDEX dashboard_form_submissions_dispatch_idx;
ALTER TABLE dashboard_form_submissions DROP COLUMN dispatch_id;
