// Tables: prediction_log and prediction_outcomes (reads), and the refresh's claim on dispatches
// (`prediction_refreshed_at`). Both are written by db/dispatch-changes.ts in the same statement as
// a projection version; read here: a dispatch's predictions over time, and the outcomes behind
// `predictions quality` (the window predicted at registration beside the actual delivery date of
// every delivered live dispatch). Then the hourly refresh's queries.
import type { Prediction } from '../domain/prediction.js';
import type { ReportedOutcome } from '../domain/prediction-quality.js';
import type { CurrentStatus } from '../domain/state-machine.js';
import type { ConfidenceLevel, DispatchStatus, ExceptionReason, NotLearnedReason } from '../domain/vocabulary.js';
import type { Pool } from './pool.js';

export interface LoggedPrediction {
  version: number;
  computedAt: Date;
  /** The dispatch's status when the prediction was made. */
  status: DispatchStatus;
  window: { min: string; max: string };
  confidence: ConfidenceLevel;
}

/** Every prediction served for the dispatch, oldest first (empty for an unknown id). */
export async function listPredictions(pool: Pool, dispatchId: string): Promise<LoggedPrediction[]> {
  const { rows } = await pool.query<{
    version: number;
    computed_at: Date;
    status: DispatchStatus;
    window_min: string;
    window_max: string;
    confidence_level: ConfidenceLevel;
  }>(
    `SELECT version, computed_at, status, window_min, window_max, confidence_level
       FROM prediction_log WHERE dispatch_id = $1 ORDER BY version`,
    [dispatchId],
  );
  return rows.map((r) => ({
    version: r.version,
    computedAt: r.computed_at,
    status: r.status,
    window: { min: r.window_min, max: r.window_max },
    confidence: r.confidence_level,
  }));
}

export interface QualityFilter {
  /** Only dispatches dispatched on or after this date (YYYY-MM-DD, UTC). */
  since?: string;
  /** Only this issuer's dispatches. */
  issuerId?: string;
}

/**
 * The outcomes the published accuracy counts (docs/prediction-quality.md "Quality"): every delivered
 * live dispatch, with the window predicted at registration and the day it was delivered, whenever it
 * was registered or reported, kept in prediction_outcomes when it was delivered (db/dispatch-changes.ts)
 * and never removed with its dispatch. Test-mode ones are left out: their deliveries are test
 * helpers' rather than a carrier's. Dispatches registered before the prediction log existed have no
 * registration window and no outcome.
 */
export async function loadRegistrationOutcomes(pool: Pool, filter: QualityFilter = {}): Promise<ReportedOutcome[]> {
  const { rows } = await pool.query<{
    country_code: string;
    confidence_level: ConfidenceLevel;
    window_min: string;
    window_max: string;
    delivered_date: string;
    learned: boolean;
    not_learned_reasons: NotLearnedReason[];
  }>(
    `SELECT country_code, confidence_level, window_min, window_max, delivered_date, learned, not_learned_reasons
       FROM prediction_outcomes
      WHERE mode = 'live' AND ($1::date IS NULL OR dispatch_date >= $1::date) AND ($2::text IS NULL OR issuer_id = $2)`,
    [filter.since ?? null, filter.issuerId ?? null],
  );
  return rows.map((r) => ({
    countryCode: r.country_code,
    confidence: r.confidence_level,
    window: { min: r.window_min, max: r.window_max },
    deliveredDate: r.delivered_date,
    learned: r.learned,
    notLearned: r.not_learned_reasons,
  }));
}

// ---- The hourly prediction refresh (activities/prediction-refresh.ts): a page of the dispatches not
// yet delivered and not overdue, with what their prediction was computed from, and the claim that
// makes a refresh happen at most once per hour per dispatch.
//
// A dispatch in exception `overdue` (docs/states.md "Overdue") has left the refresh: it is never
// loaded again, so never signalled, until a carrier event moves it out of that exception.
//
// The once-per-hour rule lives here, in `prediction_refreshed_at`: a dispatch claimed less than
// REFRESH_MIN_GAP before the run's time is neither loaded nor claimed, so it costs no signal and no
// workflow history. A run claims with its own time (`runAt`), and a dispatch claimed at exactly
// that time is the same run's own claim: a retried run finds and signals it again (idempotent).

/** A dispatch's prediction is refreshed at most once per hour (docs/predictions.md "Refresh"). */
export const REFRESH_MIN_GAP = '1 hour';

/** A dispatch the refresh may recompute, with the prediction its current projection version holds. */
export interface RefreshCandidate {
  id: string;
  version: number;
  dispatchDate: string;
  destination: { postal_code: string; country_code: string };
  state: CurrentStatus;
  prediction: Prediction;
  /** When a refresh last claimed it (ISO), if ever: a passed window is re-estimated once per business day. */
  refreshedAt: string | null;
}

interface CandidateRow {
  id: string;
  version: number;
  status: CurrentStatus['status'];
  dispatch_date: Date;
  postal_code: string;
  country_code: string;
  exception_reason: ExceptionReason | null;
  status_since: Date | null;
  prediction_refreshed_at: Date | null;
  window_min: string;
  window_max: string;
  confidence_level: ConfidenceLevel;
}

/** The dispatches the refresh looks after: not delivered, not overdue (the partial index's predicate). */
const REFRESHED = `d.status <> 'delivered' AND d.exception_reason IS DISTINCT FROM 'overdue'`;

const NOT_CLAIMED_WITHIN_AN_HOUR = `(prediction_refreshed_at IS NULL
  OR prediction_refreshed_at <= $1::timestamptz - interval '${REFRESH_MIN_GAP}' OR prediction_refreshed_at = $1::timestamptz)`;

/**
 * The next page (in id order, after `afterId`) of dispatches not delivered, not overdue and not
 * refreshed within the hour before `runAt`. When the current status began is read back from the
 * carrier event log (the latest event that set or renewed it; the dispatch date when none): an
 * out-for-delivery card's window depends on it (today's scan, or an earlier one:
 * domain/prediction.ts), and every card's overdue clock counts from the window predicted then.
 */
export async function loadRefreshCandidates(
  pool: Pool,
  query: { runAt: string; afterId: string | null; limit: number },
): Promise<RefreshCandidate[]> {
  const { rows } = await pool.query<CandidateRow>(
    `SELECT d.id, d.version, d.status, d.dispatch_date, d.postal_code, d.country_code, d.exception_reason,
            d.window_min, d.window_max, d.confidence_level, d.prediction_refreshed_at,
            (SELECT max(e.occurred_at) FROM carrier_events e
              WHERE e.dispatch_id = d.id AND e.status = d.status AND e.effect IN ('applied', 'exception_repeated')) AS status_since
       FROM dispatches d
      WHERE ${REFRESHED} AND d.id > coalesce($2::uuid, '00000000-0000-0000-0000-000000000000') AND ${NOT_CLAIMED_WITHIN_AN_HOUR}
      ORDER BY d.id
      LIMIT $3`,
    [query.runAt, query.afterId, query.limit],
  );
  return rows.map((row) => {
    const dispatchDate = row.dispatch_date.toISOString();
    const state: CurrentStatus = { status: row.status, statusSince: (row.status_since ?? row.dispatch_date).toISOString() };
    if (row.exception_reason) state.exceptionReason = row.exception_reason;
    return {
      id: row.id,
      version: row.version,
      dispatchDate,
      destination: { postal_code: row.postal_code, country_code: row.country_code },
      state,
      prediction: { window: { min: row.window_min, max: row.window_max }, confidence: row.confidence_level },
      refreshedAt: row.prediction_refreshed_at?.toISOString() ?? null,
    };
  });
}

/**
 * Claims dispatches for this run (to re-estimate, or to make overdue), each only if its projection
 * is still the version the run judged (a newer version already holds fresher news, e.g. a carrier
 * event) and no other run claimed it within the hour. Returns those claimed, with that version.
 */
export async function claimRefreshes(
  pool: Pool,
  runAt: string,
  dispatches: ReadonlyArray<{ id: string; version: number }>,
): Promise<Array<{ id: string; version: number }>> {
  if (dispatches.length === 0) return [];
  const { rows } = await pool.query<{ id: string; version: number }>(
    `UPDATE dispatches d SET prediction_refreshed_at = $1::timestamptz
       FROM unnest($2::uuid[], $3::bigint[]) AS c (id, version)
      WHERE d.id = c.id AND d.version = c.version AND ${REFRESHED} AND ${NOT_CLAIMED_WITHIN_AN_HOUR}
      RETURNING d.id, d.version`,
    [runAt, dispatches.map((d) => d.id), dispatches.map((d) => d.version)],
  );
  return rows;
}
