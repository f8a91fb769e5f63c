-- Up Migration
-- Erasure (docs/http-contract.md "Erasure"): one row per erased dispatch, written when the erasure is
-- requested (DELETE /v1/dispatches/{id}, `dispatch erase`, `issuer erase`) or when retention erases a
-- completed dispatch (db/erasure.ts). It is the erasure's progress (GET /v1/erasures/{id}) and, once
-- every other row naming the dispatch is gone, its tombstone: the id, issuer, mode and when it was
-- erased, so the id is never registered again and every read of it answers 404 saying it was erased.
-- Nothing else about the dispatch is kept here.
CREATE TABLE erasures (
  id                     text PRIMARY KEY,
  dispatch_id            uuid NOT NULL UNIQUE,
  issuer_id              text NOT NULL,
  mode                   text NOT NULL CHECK (mode IN ('live', 'test')),
  status                 text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'failed')),
  requested_at           timestamptz NOT NULL DEFAULT now(),
  -- the tombstone's erased_at: when the last row naming the dispatch left
  completed_at           timestamptz,
  removed_rows           integer NOT NULL DEFAULT 0,
  removed_workflow_runs  integer NOT NULL DEFAULT 0
);
CREATE INDEX erasures_issuer_idx ON erasures (issuer_id);

-- Down Migration
DROP TABLE erasures;
