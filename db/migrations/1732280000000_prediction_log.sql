-- Up Migration
-- The prediction log: every prediction the dispatch workflow projected, one row per (dispatch,
-- projection version), written by the same statement as the projection itself (db/projection.ts),
-- so it can never disagree with what GET /v1/status served. It is what `predictions quality`
-- compares with actual deliveries (the window of version 1, predicted at registration) and what a
-- dispatch's predictions over time are read from (db/predictions.ts).

CREATE TABLE prediction_log (
  dispatch_id       uuid NOT NULL REFERENCES dispatches (id) ON DELETE CASCADE,
  -- the projection version this prediction was served with; a retried write finds its row here
  version           bigint NOT NULL,
  computed_at       timestamptz NOT NULL DEFAULT now(),
  -- the dispatch's status when the prediction was made (delivered: the window is the delivery date)
  status            text NOT NULL,
  window_min        date NOT NULL,
  window_max        date NOT NULL,
  confidence_level  text NOT NULL CHECK (confidence_level IN ('High', 'Medium', 'Low')),
  PRIMARY KEY (dispatch_id, version)
);

-- Down Migration
DROP TABLE prediction_log;
