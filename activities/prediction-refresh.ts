// The bulk prediction refresh (docs/predictions.md "Refresh"), run by the hourly Schedule's workflow:
// recomputes the prediction of every dispatch not yet delivered, page by page with set-based
// queries (one for the page's dispatches, one for the transit statistics of all their
// destinations), with the same pure model as the projection activity, and signals only the
// dispatches whose window or confidence changed. Each of those writes a new projection version and
// emits delivery.predicted itself; an unchanged dispatch gets no signal, so its history does not grow.
//
// Overdue cards (docs/states.md "Overdue"): the window a card is judged by is the one predicted when its current
// status began (the dispatch date, or the carrier's latest scan), before it slides past today. Once
// that window's max has passed, the sliding window is re-estimated at most once per business day
// (the destination's calendar, counted on the run's time); once it is OVERDUE_BUSINESS_DAYS
// business days behind, the card gets the service's own carrier event, exception `overdue`, logged
// in carrier_events and signalled like a carrier's (status.updated + delivery.exception come from
// the workflow's usual fold), and the refresh never loads it again (db/predictions.ts).
//
// Progress (the last page done and the counts) is heartbeated, so a retried attempt resumes after
// the last finished page instead of starting over.
//
// Each country's statistics are read once per attempt (db/country-statistics-cache.ts: entries
// loaded since the attempt began serve every page), and a signal carries when the ones its dispatch
// was compared with were loaded, so the projection write it causes reads none older. The postal
// code and prefix levels are read once per attempt too, the first time a page needs them
// (AreaLevelCache: a page of dispatches in id order spans nearly every prefix, and reading them per
// page made the transit history the run's cost, bench/scale); operator delays are read per page.
import { Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { CountryStatisticsCache } from '../db/country-statistics-cache.js';
import type { Pool } from '../db/pool.js';
import { claimRefreshes, loadRefreshCandidates, type RefreshCandidate } from '../db/predictions.js';
import { AreaLevelCache } from '../db/area-level-cache.js';
import { destinationKey, loadTransitStatisticsFor } from '../db/transit-statistics.js';
import { addBusinessDays, businessDayOnOrAfter, utcDateOf } from '../domain/calendar.js';
import { predictFromHistory } from '../domain/prediction-model.js';
import type { Config } from '../platform/config.js';
import { predictionRefreshDuration, predictionRefreshSignalled } from '../platform/metrics.js';
import { createCarrierEventIngest } from '../ingest/carrier-events.js';
import type { PredictionRefreshSummary } from '../temporal/contract.js';
import { dispatchWorkflowOptions, signalRefresh } from '../temporal/client.js';
import { predictionChanged } from '../domain/state-machine.js';

/** Dispatches per page: one statistics query serves a page's destinations. */
const PAGE_SIZE = 1000;
/** Signals in flight at once: enough to hide round trips, few enough to spare the Temporal frontend. */
const SIGNAL_CONCURRENCY = 20;

export interface PredictionRefreshInput {
  /**
   * The run's time (ISO): its claims carry it, the once-per-hour and once-per-business-day rules
   * are counted from it, and an overdue card's exception occurs at it.
   */
  runAt: string;
}

interface Progress extends PredictionRefreshSummary {
  afterId: string | null;
}

/** What the run decided for a page's candidates. */
interface PageVerdicts {
  /** Changed and due for re-estimation, each with when its country's statistics were loaded. */
  changed: Map<string, string>;
  /** Overdue, each with the max of the window it is judged by. */
  overdue: Map<string, string>;
}

export function createPredictionRefreshActivities(deps: {
  pool: Pool;
  temporal: Client;
  countryStatistics: CountryStatisticsCache;
  config: Pick<Config, 'OVERDUE_BUSINESS_DAYS' | 'TEMPORAL_TASK_QUEUE' | 'DELIVERED_RETENTION' | 'EXCEPTION_RETENTION'>;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  const ingest = createCarrierEventIngest({
    pool: deps.pool,
    temporal: deps.temporal,
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowOptions: dispatchWorkflowOptions(deps.config),
  });
  const overdueBusinessDays = deps.config.OVERDUE_BUSINESS_DAYS;

  /**
   * The page's verdicts: the candidates overdue on the run's day, and, among the others, those whose
   * recomputed prediction differs from the one their projection holds and that are due for it (a
   * passed window once per business day), each with when its country's statistics were loaded (no
   * earlier than `attemptStart`).
   */
  async function judge(candidates: RefreshCandidate[], attemptStart: string, runAt: string, areas: AreaLevelCache): Promise<PageVerdicts> {
    // `today` as the projection activity takes it, so both compute the same window.
    const today = now().toISOString().slice(0, 10);
    const destinations = candidates.map((c) => ({ countryCode: c.destination.country_code, postalCode: c.destination.postal_code }));
    const loadedAt = new Map<string, string>();
    const statistics = await loadTransitStatisticsFor(
      deps.pool,
      destinations,
      today,
      deps.countryStatistics.source(attemptStart, loadedAt),
      areas.source,
    );
    const runDay = utcDateOf(runAt);
    const verdicts: PageVerdicts = { changed: new Map(), overdue: new Map() };
    candidates.forEach((c, i) => {
      const stats = statistics.get(destinationKey(destinations[i]))!;
      const country = c.destination.country_code;
      const input = { dispatchDate: c.dispatchDate, destination: c.destination, state: c.state, today };
      // The window as predicted the day the status began: before it passed, nothing slid it.
      const statusDay = utcDateOf(c.state.statusSince);
      const judgedMax = predictFromHistory({ ...input, today: statusDay < today ? statusDay : today }, stats).window.max;
      if (addBusinessDays(judgedMax, overdueBusinessDays, country) < runDay) {
        verdicts.overdue.set(c.id, judgedMax);
        return;
      }
      if (judgedMax < runDay && refreshedThisBusinessDay(c.refreshedAt, runAt, country)) return;
      const next = predictFromHistory(input, stats);
      if (predictionChanged(c.prediction, next)) verdicts.changed.set(c.id, loadedAt.get(destinations[i].countryCode.toUpperCase())!);
    });
    return verdicts;
  }

  /** Signals one dispatch; false when it has no running workflow to receive it. */
  async function signal(dispatch: { id: string; version: number }, statisticsAsOf: string): Promise<boolean> {
    return signalRefresh(deps.temporal, dispatch.id, { version: dispatch.version, statisticsAsOf });
  }

  /**
   * An overdue card's exception, ingested as a carrier's event is (ingest/carrier-events.ts): logged,
   * then signalled; a dispatch whose workflow rested and completed starts again, one terminated
   * undelivered keeps the event to no effect (false: nothing received it). The event's id names the
   * window it was judged by, so a repeat (a retried attempt) is the same event, deduplicated by both.
   */
  async function signalOverdue(dispatch: RefreshCandidate, judgedMax: string, runAt: string): Promise<boolean> {
    const event = { status: 'exception', reason: 'overdue', occurred_at: runAt, event_id: `overdue:${judgedMax}` } as const;
    const outcome = await ingest.ingest(dispatch, { event }, new Date(runAt));
    return outcome.outcome === 'accepted';
  }

  return {
    async refreshPredictions(input: PredictionRefreshInput): Promise<PredictionRefreshSummary> {
      const context = Context.current();
      const attemptStart = new Date().toISOString();
      const areas = new AreaLevelCache(deps.pool);
      const endTimer = predictionRefreshDuration.startTimer();
      const progress: Progress = (context.info.heartbeatDetails as Progress | undefined) ?? {
        afterId: null,
        considered: 0,
        changed: 0,
        signalled: 0,
        missing: 0,
        overdue: 0,
      };
      for (;;) {
        const page = await loadRefreshCandidates(deps.pool, { runAt: input.runAt, afterId: progress.afterId, limit: PAGE_SIZE });
        if (page.length === 0) break;
        const { changed, overdue } = await judge(page, attemptStart, input.runAt, areas);
        const candidates = new Map(page.map((c) => [c.id, c]));
        // A retried attempt claims its own claims again (same runAt) and repeats this page's signals;
        // the workflow keeps one pending refresh and deduplicates carrier events by their key, so a
        // repeated signal changes nothing. A claim also makes sure no carrier event has moved the
        // dispatch on since it was judged (same version).
        const claimed = await claimRefreshes(
          deps.pool,
          input.runAt,
          page.filter((c) => changed.has(c.id) || overdue.has(c.id)),
        );
        let missing = 0;
        let signalledOverdue = 0;
        for (let i = 0; i < claimed.length; i += SIGNAL_CONCURRENCY) {
          const batch = claimed.slice(i, i + SIGNAL_CONCURRENCY);
          const received = await Promise.all(
            batch.map((dispatch) =>
              overdue.has(dispatch.id)
                ? signalOverdue(candidates.get(dispatch.id)!, overdue.get(dispatch.id)!, input.runAt)
                : signal(dispatch, changed.get(dispatch.id)!),
            ),
          );
          missing += received.filter((ok) => !ok).length;
          signalledOverdue += batch.filter((dispatch, j) => received[j] && overdue.has(dispatch.id)).length;
          context.heartbeat(progress);
        }
        progress.considered += page.length;
        progress.changed += changed.size;
        progress.signalled += claimed.length - missing;
        predictionRefreshSignalled.inc(claimed.length - missing);
        progress.missing += missing;
        progress.overdue! += signalledOverdue;
        progress.afterId = page[page.length - 1].id;
        context.heartbeat(progress);
      }
      endTimer();
      const { afterId: _, ...summary } = progress;
      log.info('predictions refreshed', { runAt: input.runAt, ...summary });
      return summary;
    },
  };
}

/**
 * True when a refresh already claimed the dispatch on the run's business day (the destination's
 * calendar: a weekend or holiday belongs to the next business day), by another run than this one.
 */
function refreshedThisBusinessDay(refreshedAt: string | null, runAt: string, country: string): boolean {
  if (refreshedAt === null || Date.parse(refreshedAt) === Date.parse(runAt)) return false;
  return businessDayOnOrAfter(utcDateOf(refreshedAt), country) >= businessDayOnOrAfter(utcDateOf(runAt), country);
}
