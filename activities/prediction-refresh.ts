// The bulk prediction refresh (README "Prediction refresh"), run by the hourly Schedule's workflow:
// recomputes the prediction of every dispatch not yet delivered, page by page with set-based
// queries (one for the page's dispatches, one for the transit statistics of all their
// destinations), with the same pure model as the projection activity, and signals only the
// dispatches whose window or confidence changed. Each of those writes a new projection version and
// emits delivery.predicted itself; an unchanged dispatch gets no signal, so its history does not grow.
//
// Progress (the last page done and the counts) is heartbeated, so a retried attempt resumes after
// the last finished page instead of starting over.
//
// Each country's statistics are read once per attempt (db/country-statistics-cache.ts: entries
// loaded since the attempt began serve every page), and a signal carries when the ones its dispatch
// was compared with were loaded, so the projection write it causes reads none older.
import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { CountryStatisticsCache } from '../db/country-statistics-cache.js';
import type { Pool } from '../db/pool.js';
import { claimRefreshes, loadRefreshCandidates, type RefreshCandidate } from '../db/prediction-refresh.js';
import { destinationKey, loadTransitStatisticsFor } from '../db/transit-statistics.js';
import { predictFromHistory } from '../domain/prediction-model.js';
import { predictionRefreshSignal, type PredictionRefreshSummary } from '../workflows/definitions.js';
import { predictionChanged } from './projection.js';

/** Dispatches per page: one statistics query serves a page's destinations. */
const PAGE_SIZE = 1000;
/** Signals in flight at once: enough to hide round trips, few enough to spare the Temporal frontend. */
const SIGNAL_CONCURRENCY = 20;

export interface PredictionRefreshInput {
  /** The run's time (ISO): its claims carry it, and the once-per-hour rule is counted from it. */
  runAt: string;
}

interface Progress extends PredictionRefreshSummary {
  afterId: string | null;
}

export function createPredictionRefreshActivities(deps: {
  pool: Pool;
  temporal: Client;
  countryStatistics: CountryStatisticsCache;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());

  /**
   * The candidates whose recomputed prediction differs from the one their projection holds, each
   * with when its country's statistics were loaded (no earlier than `attemptStart`).
   */
  async function changedAmong(candidates: RefreshCandidate[], attemptStart: string): Promise<Map<string, string>> {
    // `today` as the projection activity takes it, so both compute the same window.
    const today = now().toISOString().slice(0, 10);
    const destinations = candidates.map((c) => ({ countryCode: c.destination.country_code, postalCode: c.destination.postal_code }));
    const loadedAt = new Map<string, string>();
    const statistics = await loadTransitStatisticsFor(
      deps.pool,
      destinations,
      today,
      deps.countryStatistics.source(attemptStart, loadedAt),
    );
    const changed = new Map<string, string>();
    candidates.forEach((c, i) => {
      const stats = statistics.get(destinationKey(destinations[i]))!;
      const next = predictFromHistory({ dispatchDate: c.dispatchDate, destination: c.destination, state: c.state, today }, stats);
      if (predictionChanged(c.prediction, next)) changed.set(c.id, loadedAt.get(destinations[i].countryCode.toUpperCase())!);
    });
    return changed;
  }

  /** Signals one dispatch; false when it has no running workflow to receive it. */
  async function signal(dispatch: { id: string; version: number }, statisticsAsOf: string): Promise<boolean> {
    try {
      await deps.temporal.workflow.getHandle(dispatch.id).signal(predictionRefreshSignal, { version: dispatch.version, statisticsAsOf });
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }

  return {
    async refreshPredictions(input: PredictionRefreshInput): Promise<PredictionRefreshSummary> {
      const context = Context.current();
      const attemptStart = new Date().toISOString();
      const progress: Progress = (context.info.heartbeatDetails as Progress | undefined) ?? {
        afterId: null,
        considered: 0,
        changed: 0,
        signalled: 0,
        missing: 0,
      };
      for (;;) {
        const page = await loadRefreshCandidates(deps.pool, { runAt: input.runAt, afterId: progress.afterId, limit: PAGE_SIZE });
        if (page.length === 0) break;
        const changed = await changedAmong(page, attemptStart);
        // A retried attempt claims its own claims again (same runAt) and repeats this page's signals;
        // the workflow keeps one pending refresh, so a repeated signal changes nothing.
        const claimed = await claimRefreshes(
          deps.pool,
          input.runAt,
          page.filter((c) => changed.has(c.id)),
        );
        let missing = 0;
        for (let i = 0; i < claimed.length; i += SIGNAL_CONCURRENCY) {
          const batch = claimed.slice(i, i + SIGNAL_CONCURRENCY);
          const received = await Promise.all(batch.map((dispatch) => signal(dispatch, changed.get(dispatch.id)!)));
          missing += received.filter((ok) => !ok).length;
          context.heartbeat(progress);
        }
        progress.considered += page.length;
        progress.changed += changed.size;
        progress.signalled += claimed.length - missing;
        progress.missing += missing;
        progress.afterId = page[page.length - 1].id;
        context.heartbeat(progress);
      }
      const { afterId: _, ...summary } = progress;
      log.info('predictions refreshed', { runAt: input.runAt, ...summary });
      return summary;
    },
  };
}
