// Tables: webhook_replays (and the matching webhook_deliveries, read a page at a time).
// Replay of webhook deliveries an operator or an issuer asks for (`deliveries replay`, the
// dashboard's delivery log). Nothing is reset here: the redelivery workflow (workflows/redelivery.ts)
// reads the matching deliveries a page at a time (keyset on the event's creation time and id) and
// its delivery activity takes each one over only when it is about to drive it (db/webhooks.ts
// claimDelivery). Each replay has a progress row (webhook_replays) that the workflow moves page by
// page. Deliveries of any state qualify: recovering a range is also how a consumer gets back events
// it acknowledged and then lost, or missed while its endpoint was disabled. Removed and disabled
// (paused) endpoints are left out: nothing would be sent to them; so are events whose payload
// expired (RETENTION_WEBHOOK_PAYLOAD), which a replay naming them refuses (ingest/webhook-replays.ts),
// and those of a dispatch whose erasure was requested (docs/privacy.md "Erasure").
import type { ReplayCursor, ReplayFilterInput } from '../domain/webhook-event-schemas.js';
import { utcMicroseconds } from './creation-cursor.js';
import { notErased } from './dispatches.js';
import type { Pool, PoolClient } from './pool.js';

type Db = Pool | PoolClient;

/**
 * One event (to every endpoint it went to, or only to `endpointId`), an endpoint's events created in
 * [since, until), or a list of events to one endpoint (the API's `event_ids`, at most 1,000).
 */
export type ReplayFilter =
  { eventId: string; endpointId?: string } | { endpointId: string; since: Date; until: Date } | { endpointId: string; eventIds: string[] };

export function toFilterInput(filter: ReplayFilter): ReplayFilterInput {
  return 'eventId' in filter || 'eventIds' in filter
    ? filter
    : { endpointId: filter.endpointId, since: filter.since.toISOString(), until: filter.until.toISOString() };
}

function where(filter: ReplayFilterInput): { sql: string; values: unknown[] } {
  // An event whose payload expired (db/retention.ts) has nothing left to send; one of a dispatch
  // whose erasure was requested must not be sent again (its record is in the body).
  const base = `e.disabled_at IS NULL AND e.paused_at IS NULL AND ev.payload_expired_at IS NULL AND ${notErased('ev.dispatch_id')}`;
  if ('eventIds' in filter) {
    return { sql: `${base} AND d.endpoint_id = $1 AND d.event_id = ANY ($2::text[])`, values: [filter.endpointId, filter.eventIds] };
  }
  return 'eventId' in filter
    ? {
        sql: `${base} AND d.event_id = $1 AND ($2::text IS NULL OR d.endpoint_id = $2)`,
        values: [filter.eventId, filter.endpointId ?? null],
      }
    : {
        sql: `${base} AND d.endpoint_id = $1 AND ev.created_at >= $2 AND ev.created_at < $3`,
        values: [filter.endpointId, filter.since, filter.until],
      };
}

const FROM = `FROM webhook_deliveries d
  JOIN webhook_events ev ON ev.id = d.event_id
  JOIN webhook_endpoints e ON e.id = d.endpoint_id`;

/**
 * Of the events a replay names, the ones whose payload expired (retention cleared it), with when;
 * only those the replay would select but for that: with a delivery to `endpointId` (to any endpoint
 * when none is named, the operator's `deliveries replay --event-id`), of a dispatch whose erasure was
 * not requested. Another issuer's id, the other mode's, or one never delivered to this endpoint is
 * ignored as an unknown id is (docs/webhooks.md), never told apart as expired (and when).
 */
export async function findExpiredPayloads(
  db: Db,
  named: { eventIds: readonly string[]; endpointId?: string },
): Promise<Array<{ eventId: string; expiredAt: Date }>> {
  const { rows } = await db.query<{ id: string; payload_expired_at: Date }>(
    `SELECT ev.id, ev.payload_expired_at FROM webhook_events ev
      WHERE ev.id = ANY ($1::text[]) AND ev.payload_expired_at IS NOT NULL AND ${notErased('ev.dispatch_id')}
        AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND ($2::text IS NULL OR d.endpoint_id = $2))
      ORDER BY ev.id`,
    [named.eventIds, named.endpointId ?? null],
  );
  return rows.map((row) => ({ eventId: row.id, expiredAt: row.payload_expired_at }));
}

/** Whether a webhook event of this id exists (one of a dispatch whose erasure was requested does not, as for the API). */
export async function webhookEventExists(db: Db, eventId: string): Promise<boolean> {
  const { rowCount } = await db.query(`SELECT 1 FROM webhook_events ev WHERE ev.id = $1 AND ${notErased('ev.dispatch_id')}`, [eventId]);
  return rowCount === 1;
}

/** How many deliveries the filter matches now. */
export async function countReplayMatches(db: Db, filter: ReplayFilter): Promise<number> {
  const w = where(toFilterInput(filter));
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n ${FROM} WHERE ${w.sql}`, w.values);
  return rows[0].n;
}

/** One page of the matching deliveries after `after`, in (event creation time, event id, endpoint id) order. */
export async function loadReplayPage(
  db: Db,
  input: { filter: ReplayFilterInput; after?: ReplayCursor; limit: number },
): Promise<{ deliveries: Array<{ eventId: string; endpointId: string }>; next?: ReplayCursor }> {
  const w = where(input.filter);
  const n = w.values.length;
  const { rows } = await db.query<{ event_id: string; endpoint_id: string; created_at: string }>(
    `SELECT d.event_id, d.endpoint_id, ${utcMicroseconds('ev.created_at')} AS created_at
     ${FROM}
      WHERE ${w.sql}
        AND ($${n + 1}::timestamptz IS NULL OR (ev.created_at, d.event_id, d.endpoint_id) > ($${n + 1}, $${n + 2}, $${n + 3}))
      ORDER BY ev.created_at, d.event_id, d.endpoint_id
      LIMIT $${n + 4}`,
    [...w.values, input.after?.createdAt ?? null, input.after?.eventId ?? null, input.after?.endpointId ?? null, input.limit],
  );
  const last = rows.at(-1);
  return {
    deliveries: rows.map((row) => ({ eventId: row.event_id, endpointId: row.endpoint_id })),
    next:
      last && rows.length === input.limit
        ? { createdAt: last.created_at, eventId: last.event_id, endpointId: last.endpoint_id }
        : undefined,
  };
}

// ---------- progress (webhook_replays) ----------

export interface ReplayProgress {
  id: string;
  endpointId: string | null;
  eventId: string | null;
  since: Date | null;
  until: Date | null;
  status: 'running' | 'completed' | 'failed';
  /** Deliveries the filter matched when the replay started. */
  total: number;
  /** Deliveries driven to a settled outcome so far (delivered + failed + skipped). */
  sent: number;
  delivered: number;
  /** Undeliverable after the replay's attempts. */
  failed: number;
  /** Not sent: endpoint disabled or unsubscribed meanwhile, or taken over by a later replay. */
  skipped: number;
  createdAt: Date;
  completedAt: Date | null;
}

export async function createReplay(db: Db, input: { id: string; filter: ReplayFilter; total: number }): Promise<void> {
  const f = input.filter;
  await db.query(`INSERT INTO webhook_replays (id, endpoint_id, event_id, since, until, total) VALUES ($1, $2, $3, $4, $5, $6)`, [
    input.id,
    f.endpointId ?? null,
    'eventId' in f ? f.eventId : null,
    'since' in f ? f.since : null,
    'until' in f ? f.until : null,
    input.total,
  ]);
}

/**
 * Adds one page's outcomes; `done` completes the replay. `run` names the page: the workflow run
 * that drove it (each page is one run). A page already added (its activity retried after its
 * first try committed) adds nothing again, so `sent` never passes what was driven.
 */
export async function addReplayProgress(
  db: Db,
  id: string,
  page: { run: string; delivered: number; failed: number; skipped: number; done: boolean },
): Promise<void> {
  await db.query(
    `UPDATE webhook_replays
        SET delivered = delivered + $2, failed = failed + $3, skipped = skipped + $4, sent = sent + $2 + $3 + $4,
            status = CASE WHEN $5 THEN 'completed' ELSE status END, completed_at = CASE WHEN $5 THEN now() END,
            progress_run_id = $6
      WHERE id = $1 AND progress_run_id IS DISTINCT FROM $6`,
    [id, page.delivered, page.failed, page.skipped, page.done, page.run],
  );
}

export async function failReplay(db: Db, id: string): Promise<void> {
  await db.query(`UPDATE webhook_replays SET status = 'failed', completed_at = now() WHERE id = $1 AND status = 'running'`, [id]);
}

/**
 * The oldest `limit` replays still `running`, for the reconciler to ask Temporal about their
 * workflows; `overdue`: created more than `graceMs` ago (one whose workflow Temporal does not know
 * by then was never started: its request died between the row and the start).
 */
export async function runningReplays(
  db: Db,
  options: { graceMs: number; limit: number },
): Promise<Array<{ id: string; overdue: boolean }>> {
  const { rows } = await db.query<{ id: string; overdue: boolean }>(
    `SELECT id, created_at < now() - $1 * interval '1 millisecond' AS overdue
       FROM webhook_replays WHERE status = 'running' ORDER BY created_at LIMIT $2`,
    [options.graceMs, options.limit],
  );
  return rows;
}

function toProgress(row: Record<string, never>): ReplayProgress {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    since: row.since,
    until: row.until,
    status: row.status,
    total: row.total,
    sent: row.sent,
    delivered: row.delivered,
    failed: row.failed,
    skipped: row.skipped,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

export async function getReplay(db: Db, id: string): Promise<ReplayProgress | undefined> {
  const { rows } = await db.query(`SELECT * FROM webhook_replays WHERE id = $1`, [id]);
  return rows[0] ? toProgress(rows[0]) : undefined;
}

/** A replay of one of the issuer's endpoints of `mode` (GET /v1/replays/{id}); undefined for any other. */
export async function findEndpointReplay(db: Db, issuerId: string, mode: 'live' | 'test', id: string): Promise<ReplayProgress | undefined> {
  const { rows } = await db.query(
    `SELECT r.* FROM webhook_replays r JOIN webhook_endpoints e ON e.id = r.endpoint_id
      WHERE r.id = $1 AND e.issuer_id = $2 AND e.mode = $3`,
    [id, issuerId, mode],
  );
  return rows[0] ? toProgress(rows[0]) : undefined;
}

/** The endpoint's most recent replays, newest first (the dashboard's delivery log). */
export async function listReplays(db: Db, endpointId: string, limit = 5): Promise<ReplayProgress[]> {
  const { rows } = await db.query(`SELECT * FROM webhook_replays WHERE endpoint_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [
    endpointId,
    limit,
  ]);
  return rows.map(toProgress);
}

/** The state of one event's deliveries to enabled endpoints (what `deliveries replay --event-id` reports). */
export async function eventDeliveries(
  db: Db,
  eventId: string,
  endpointId?: string,
): Promise<Array<{ eventId: string; endpointId: string; state: string; attempts: number }>> {
  const w = where({ eventId, endpointId });
  const { rows } = await db.query(
    `SELECT d.event_id, d.endpoint_id, d.state, d.attempts ${FROM} WHERE ${w.sql} ORDER BY d.endpoint_id`,
    w.values,
  );
  return rows.map((row) => ({ eventId: row.event_id, endpointId: row.endpoint_id, state: row.state, attempts: row.attempts }));
}
