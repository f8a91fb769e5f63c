// The retention activities' settings the activity tests share: every window one second, so a
// dispatch seeded a minute ago is due; no webhook payload or transit history window.
import type { RetentionDeps } from '../../activities/retention.js';

export const shortRetentionConfig = (pauseMs = 0): RetentionDeps['config'] => ({
  RETENTION_DISPATCH: 1_000,
  WEBHOOK_TIMEOUT_MS: 5_000,
  RETENTION_WEBHOOK_PAYLOAD: null,
  RETENTION_TRANSIT_HISTORY: null,
  RETENTION_BATCH_PAUSE: pauseMs,
  DELIVERED_RETENTION: 1_000,
  EXCEPTION_RETENTION: 1_000,
});
