// The retention sweep (docs/privacy.md "What is kept, and for how long"), one activity run by the
// daily Schedule's workflow and by `npm run admin -- retention run` (workflows/retention.ts): it
// applies the windows of the worker's configuration in bounded batches, oldest first —
//   1. dispatches resting past RETENTION_DISPATCH are erased (Temporal runs, then Postgres rows:
//      temporal/erasure.ts, db/erasure.ts), a few at a time;
//   2. settled webhook events past RETENTION_WEBHOOK_PAYLOAD lose their payload;
//   3. transit history past RETENTION_TRANSIT_HISTORY, tracking links expired 30 days ago, tracking
//      feeds' unmatched and ignored checkpoints kept 30 days and their hourly counts past two days are deleted.
// First of all, an erasure requested over STALLED_ERASURE_MS ago and not completed has its workflow
// started (ingest/erasure.ts driveErasure; nothing happens where it runs): a pending one whose request
// recorded it and went no further (the API process died, or Temporal was down, between the two, and
// the client never asked again), or a failed one, whose workflow ran out of retries (back to pending
// first); so the daily sweep keeps the documented bound of a day.
// One batch at a time, with RETENTION_BATCH_PAUSE between two batches: a sweep of a large backlog
// must leave the database to live traffic (status reads) most of the time (bench/retention README).
// After every batch it heartbeats its progress (the counts, the phase, the walk's cursor) and logs
// it, so a retry after a lost worker resumes there. A dispatch is erased whole or not at all: a
// batch's rows leave in one transaction (db/erasure.ts), after the runs of each of its dispatches; a
// crash between the two leaves the rows, which the next attempt finds again and erases (their runs
// already gone). Then a last sweep deletes a run that a carrier event's restart started in between.
import { Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { eraseDispatchRows } from '../db/erasure.js';
import { findUnfinishedErasures, retryErasure } from '../db/erasure-records.js';
import { deleteExpiredIgnored, deleteExpiredUnmatched } from '../db/feed-checkpoints.js';
import { deleteOldFeedCounts } from '../db/tracking-feeds.js';
import type { Pool } from '../db/pool.js';
import {
  clearSettledPayloads,
  deleteExpiredTrackingLinks,
  deleteOldTransitHistory,
  findDispatchesDue,
  type DispatchCursor,
} from '../db/retention.js';
import type { Config } from '../platform/config.js';
import { retentionErased, type RetentionKind } from '../platform/metrics.js';
import type { RetentionSummary } from '../temporal/contract.js';
import { dispatchRunStates } from '../temporal/client.js';
import { deleteLateRuns, deleteRunsOfDispatches } from '../temporal/erasure.js';
import { driveErasure } from '../ingest/erasure.js';

/** Rows per batch (payloads, history rows, links): one short statement each. */
export const RETENTION_BATCH_SIZE = 1000;
/** Dispatches per batch: one visibility query, a few Temporal calls each when it has runs, then one transaction for the batch. */
const DISPATCH_BATCH_SIZE = 200;

/** A pending erasure requested this long ago has its workflow started by the sweep: its request's own start is long over. */
export const STALLED_ERASURE_MS = 60_000;

const PHASES = ['erasures', 'dispatches', 'payloads', 'history', 'links', 'unmatched', 'ignored', 'feed_counts', 'done'] as const;
type Phase = (typeof PHASES)[number];

interface Progress extends RetentionSummary {
  phase: Phase;
  /** The walk over resting dispatches: those before it are erased or still have an open run. */
  after?: DispatchCursor;
}

export interface RetentionInput {
  /** Rows per batch; tests make it small to see several batches. */
  batchSize?: number;
}

export interface RetentionDeps {
  pool: Pool;
  temporal: Client;
  config: Pick<
    Config,
    | 'RETENTION_DISPATCH'
    | 'RETENTION_WEBHOOK_PAYLOAD'
    | 'RETENTION_TRANSIT_HISTORY'
    | 'RETENTION_BATCH_PAUSE'
    | 'DELIVERED_RETENTION'
    | 'EXCEPTION_RETENTION'
    | 'WEBHOOK_TIMEOUT_MS'
  >;
}

export function createRetentionActivities(deps: RetentionDeps) {
  /**
   * Erases the batch's dispatches whose workflow is not running (a late carrier event may have started
   * it again): every Temporal run of each first, then all their rows in one transaction. One
   * visibility query finds which have runs at all; a run Temporal forgot (the namespace's retention
   * deleted it) is complete, as the projection says the card rests. Answers how many it erased:
   * a dispatch a concurrent sweep (the CLI's beside the Schedule's) erased first is not counted.
   */
  async function eraseBatch(ids: string[]): Promise<number> {
    const runs = await dispatchRunStates(deps.temporal, ids);
    const completed = ids.filter((id) => runs.get(id) !== 'running');
    await deleteRunsOfDispatches(
      deps.temporal,
      completed.filter((id) => runs.has(id)),
    );
    const { dispatches } = await eraseDispatchRows(deps.pool, completed);
    await deleteLateRuns(deps.temporal, completed);
    return dispatches;
  }

  return {
    async applyRetention(input: RetentionInput = {}): Promise<RetentionSummary> {
      const context = Context.current();
      const { config } = deps;
      const limit = input.batchSize ?? RETENTION_BATCH_SIZE;
      const progress: Progress = (context.info.heartbeatDetails as Progress | undefined) ?? {
        phase: 'erasures',
        erased_dispatches: 0,
        cleared_payloads: 0,
        deleted_history_rows: 0,
        deleted_links: 0,
      };
      if (context.info.attempt > 1) log.info('retention sweep resumed', { ...progress });
      /** `field` is the summary's count of the kind; a tracking feed's expired checkpoints and counts have none in the printed summary (docs/admin-cli.md), only the metric. */
      const done = (kind: RetentionKind, field: keyof RetentionSummary | undefined, count: number, started: number) => {
        if (field) progress[field] += count;
        if (count > 0) {
          retentionErased.inc({ kind }, count);
          log.info('retention batch', { kind, count, ...(field ? { total: progress[field] } : {}), ms: Math.round(performance.now() - started) }); // prettier-ignore
        }
        context.heartbeat(progress);
      };
      /** Before every batch but the sweep's first: RETENTION_BATCH_PAUSE, so live traffic has the database meanwhile. */
      let batches = 0;
      const pace = async () => {
        if (batches++ > 0 && config.RETENTION_BATCH_PAUSE > 0) await context.sleep(config.RETENTION_BATCH_PAUSE);
      };
      /** Runs `batch` until one comes back short, then moves to the next phase. */
      const drain = async (phase: Phase, batch: () => Promise<number>, kind: RetentionKind, field?: keyof RetentionSummary) => {
        if (progress.phase !== phase) return;
        for (;;) {
          await pace();
          const started = performance.now();
          const count = await batch();
          done(kind, field, count, started);
          if (count < limit) break;
        }
        progress.phase = PHASES[PHASES.indexOf(phase) + 1];
        context.heartbeat(progress);
      };

      if (progress.phase === 'erasures') {
        const drive = { temporal: deps.temporal, taskQueue: context.info.taskQueue, webhookTimeoutMs: config.WEBHOOK_TIMEOUT_MS };
        for (let after: string | undefined; ;) {
          const stalled = await findUnfinishedErasures(deps.pool, { olderThanMs: STALLED_ERASURE_MS, limit, after });
          const started: string[] = [];
          // A handful, each one call: one after another.
          for (const erasure of stalled) {
            if (erasure.status === 'failed') await retryErasure(deps.pool, erasure.id);
            if (await driveErasure(drive, erasure)) started.push(erasure.id);
          }
          if (started.length > 0) log.warn('pending erasures started', { erasure_ids: started });
          context.heartbeat(progress);
          if (stalled.length < limit) break;
          after = stalled[stalled.length - 1].id;
        }
        progress.phase = 'dispatches';
      }
      if (progress.phase === 'dispatches') {
        for (;;) {
          if (config.RETENTION_DISPATCH === null) break;
          await pace();
          const started = performance.now();
          const due = await findDispatchesDue(deps.pool, {
            windowMs: config.RETENTION_DISPATCH,
            deliveredRetentionMs: config.DELIVERED_RETENTION,
            exceptionRetentionMs: config.EXCEPTION_RETENTION,
            limit: Math.min(limit, DISPATCH_BATCH_SIZE),
            after: progress.after,
          });
          if (due.ids.length === 0) break;
          done('dispatch', 'erased_dispatches', await eraseBatch(due.ids), started);
          if (!due.next) break;
          progress.after = due.next;
        }
        progress.phase = 'payloads';
        progress.after = undefined;
      }
      const windows = { payload: config.RETENTION_WEBHOOK_PAYLOAD, history: config.RETENTION_TRANSIT_HISTORY };
      if (windows.payload === null && progress.phase === 'payloads') progress.phase = 'history';
      await drain(
        'payloads',
        () => clearSettledPayloads(deps.pool, { windowMs: windows.payload!, limit }),
        'webhook_payload',
        'cleared_payloads',
      );
      if (windows.history === null && progress.phase === 'history') progress.phase = 'links';
      await drain(
        'history',
        () => deleteOldTransitHistory(deps.pool, { windowMs: windows.history!, limit }),
        'transit_history',
        'deleted_history_rows',
      );
      await drain('links', () => deleteExpiredTrackingLinks(deps.pool, { limit }), 'tracking_link', 'deleted_links');
      await drain('unmatched', () => deleteExpiredUnmatched(deps.pool, { limit }), 'feed_checkpoint');
      await drain('ignored', () => deleteExpiredIgnored(deps.pool, { limit }), 'feed_checkpoint');
      await drain('feed_counts', () => deleteOldFeedCounts(deps.pool, { limit }), 'feed_count');

      const { phase: _phase, after: _after, ...summary } = progress;
      log.info('retention sweep done', { ...summary });
      return summary;
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
