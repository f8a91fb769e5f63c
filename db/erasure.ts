// Tables: every table that names a dispatch (ERASED_TABLES), transit_history (its dispatch_id set to
// NULL) and erasures (the tombstone, inserted when none was requested). The removal of dispatches'
// rows (docs/http-contract.md "Erasure"): all of a batch's rows leave in
// one transaction, so no dispatch is ever half-erased, and only the tombstone stays. Temporal's runs
// are temporal/erasure.ts's part, removed before these rows (so no run writes the projection again).
// test/db/erasure-catalogue.test.ts reads the database's catalogue and fails when a column holding a
// dispatch id, or a table referencing one that is erased, is missing from the lists below.
import { ERASED_NUMBER_KEPT, numberHash } from './erasure-records.js';
import { newId } from './ids.js';
import type { Pool, PoolClient } from './pool.js';

/**
 * The tables erasure empties of a dispatch, each with how its rows are found: by the column that
 * holds the dispatch id, or through the table that does (a webhook event's deliveries and attempts, a
 * tracking link's gate rows), or by the dispatch ids a stored response names (idempotency records).
 * The order is the order of deletion: children before parents.
 */
export const ERASED_TABLES = {
  delivery_attempts: 'event_id → webhook_events',
  webhook_deliveries: 'event_id → webhook_events',
  webhook_replays: 'event_id → webhook_events (a replay of one event)',
  webhook_events: 'dispatch_id',
  tracking_gate_failures: 'link_id → tracking_links',
  tracking_gate_passes: 'link_id → tracking_links',
  tracking_links: 'dispatch_id',
  prediction_log: 'dispatch_id',
  carrier_events: 'dispatch_id',
  idempotency_keys: 'dispatch_ids (the ids its stored response names: a registration holds the status record)',
  feed_ignored_checkpoints: 'dispatch_id, or (ignored before matching) tracking_number, references_ as feed_unmatched_checkpoints',
  dashboard_form_submissions: 'dispatch_id (a dashboard form that created a tracking link: the page it leads to names the dispatch)',
  dispatches: 'id',
} as const;

/**
 * Tables that name a dispatch without its id, emptied of it: a tracking feed's checkpoints not yet
 * matched to a dispatch, by the dispatch's tracking number or its id among the checkpoint's
 * references, within its issuer and mode.
 */
export const ERASED_BY_NAME = { feed_unmatched_checkpoints: 'tracking_number, references_' } as const;

/** A checkpoint `c` names a dispatch `d` of its issuer and mode: its tracking number (as matching compares it), or its id among the references. */
const SAME_OWNER = 'c.issuer_id = d.issuer_id AND c.mode = d.mode';
const BY_TRACKING_NUMBER = 'c.tracking_number = d.tracking_key';
const BY_REFERENCE = 'd.id::text = ANY (c.references_)';
const CHECKPOINT_NAMES_DISPATCH = `${SAME_OWNER} AND (${BY_TRACKING_NUMBER} OR ${BY_REFERENCE})`;

/** Tables that keep their rows without the dispatch: its id is set to NULL (what predictions need stays). */
export const UNLINKED_TABLES = { transit_history: 'dispatch_id' } as const;

/** The tombstone: the only row that names an erased dispatch, by design. */
export const TOMBSTONE_TABLE = { erasures: 'dispatch_id' } as const;

export type FootprintTable = keyof typeof ERASED_TABLES | keyof typeof ERASED_BY_NAME | keyof typeof UNLINKED_TABLES;
/** Rows per table that still name a dispatch. */
export type Footprint = Record<FootprintTable, number>;

/**
 * Erases every Postgres row that names these dispatches, in one transaction for the batch, leaving
 * the tombstone (id, issuer, mode, erased_at: a completed erasure is recorded for a dispatch whose
 * erasure nobody requested, e.g. retention's) and unlinking transit history (dispatch id set to NULL).
 * Idempotent: a dispatch already erased counts 0 rows. `dispatches`: how many projection rows this
 * transaction deleted, i.e. the dispatches it erased (one erased meanwhile by another, a concurrent
 * sweep's, is not counted: its rows were locked, then gone). `completeRequested`: the batch's
 * erasures already recorded complete in the same transaction.
 */
export async function eraseDispatchRows(
  pool: Pool,
  dispatchIds: readonly string[],
  options: { completeRequested?: boolean } = {},
): Promise<{ rows: number; dispatches: number }> {
  if (dispatchIds.length === 0) return { rows: 0, dispatches: 0 };
  const ids = [...new Set(dispatchIds.map((id) => id.toLowerCase()))];
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const erased = await eraseInTransaction(client, ids);
    // The erasures recorded for the batch by its caller (ingest/erasure.ts eraseAtOnce), not by a
    // workflow of their own that records what it removed: complete with the rows.
    if (options.completeRequested) {
      await client.query(
        `UPDATE erasures SET status = 'completed', completed_at = now() WHERE dispatch_id = ANY($1::uuid[]) AND status <> 'completed'`,
        [ids],
      );
    }
    await client.query('COMMIT');
    return erased;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function eraseInTransaction(client: PoolClient, ids: string[]): Promise<{ rows: number; dispatches: number }> {
  // The projection rows first, locked: a projection write waiting on them finds them gone.
  const { rows: owners } = await client.query<{ id: string; issuer_id: string; mode: string }>(
    `SELECT id, issuer_id, mode FROM dispatches WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
    [ids],
  );
  // Every tombstone in one statement: one INSERT per dispatch was 200 round trips a batch, most of a
  // retention batch's time (bench/retention/probe.ts), with the batch's row locks held throughout.
  await client.query(
    `INSERT INTO erasures (id, dispatch_id, issuer_id, mode, status, completed_at)
     SELECT t.id, t.dispatch_id, t.issuer_id, t.mode, 'completed', now()
       FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) AS t(id, dispatch_id, issuer_id, mode)
     ON CONFLICT (dispatch_id) DO NOTHING`,
    [owners.map(() => newId('er')), owners.map((o) => o.id), owners.map((o) => o.issuer_id), owners.map((o) => o.mode)],
  );
  const count = async (sql: string, values: unknown[]) => (await client.query(sql, values)).rowCount ?? 0;
  const events = (await client.query<{ id: string }>('SELECT id FROM webhook_events WHERE dispatch_id = ANY($1::uuid[])', [ids])).rows.map(
    (r) => r.id,
  );
  const links = (await client.query<{ id: string }>('SELECT id FROM tracking_links WHERE dispatch_id = ANY($1::uuid[])', [ids])).rows.map(
    (r) => r.id,
  );
  let rows = 0;
  rows += await count('DELETE FROM delivery_attempts WHERE event_id = ANY($1::text[])', [events]);
  rows += await count('DELETE FROM webhook_deliveries WHERE event_id = ANY($1::text[])', [events]);
  rows += await count('DELETE FROM webhook_replays WHERE event_id = ANY($1::text[])', [events]);
  rows += await count('DELETE FROM webhook_events WHERE id = ANY($1::text[])', [events]);
  rows += await count('DELETE FROM tracking_gate_failures WHERE link_id = ANY($1::text[])', [links]);
  rows += await count('DELETE FROM tracking_gate_passes WHERE link_id = ANY($1::text[])', [links]);
  // Its links' token hashes stay without the link, so a link answers "erased" rather than "not found"
  // (erased_tracking_links: no dispatch id, nothing of the card; deleted with the expired links).
  await client.query(
    `INSERT INTO erased_tracking_links (token_hash, expires_at)
     SELECT token_hash, expires_at FROM tracking_links WHERE id = ANY($1::text[]) ON CONFLICT DO NOTHING`,
    [links],
  );
  rows += await count('DELETE FROM tracking_links WHERE id = ANY($1::text[])', [links]);
  // Its tracking number's hash stays 30 days without the dispatch, so that an aggregator still
  // reporting the card by that number is ignored, not kept as unmatched (erased_tracking_numbers;
  // written when an erasure is requested too, db/erasure-records.ts requestErasures, and here for
  // one nobody requested). Once per number: a recycled number's dispatches in one batch made the
  // statement update its row twice, which Postgres refuses, failing the batch every time.
  await client.query(
    `INSERT INTO erased_tracking_numbers (issuer_id, mode, number_hash, expires_at)
     SELECT DISTINCT issuer_id, mode, ${numberHash('tracking_key')}, now() + interval '${ERASED_NUMBER_KEPT}'
       FROM dispatches WHERE id = ANY($1::uuid[]) AND tracking_key IS NOT NULL
     ON CONFLICT (issuer_id, mode, number_hash) DO UPDATE SET expires_at = greatest(erased_tracking_numbers.expires_at, EXCLUDED.expires_at)`,
    [ids],
  );
  rows += await count('DELETE FROM prediction_log WHERE dispatch_id = ANY($1::uuid[])', [ids]);
  rows += await count('DELETE FROM carrier_events WHERE dispatch_id = ANY($1::uuid[])', [ids]);
  // A registration's replayed response holds the status record (and a batch's, several): the record
  // names the dispatch by id, and the row the ids it names (indexed). The footprint below reads the
  // bodies themselves, so a row this missed would show there.
  rows += await count('DELETE FROM idempotency_keys WHERE dispatch_ids && $1::uuid[]', [ids]);
  // A feed's unmatched checkpoints naming the dispatch: by its tracking number, then by its id among
  // the references, each statement on its own index. With both in one OR, every checkpoint kept was
  // compared with every dispatch of the batch (4–8 s a batch beside 100,000 of them,
  // bench/retention/README.md "Tracking feeds' unmatched checkpoints").
  rows += await count(`DELETE FROM feed_unmatched_checkpoints c USING dispatches d WHERE d.id = ANY($1::uuid[]) AND ${SAME_OWNER} AND ${BY_TRACKING_NUMBER}`, [ids]); // prettier-ignore
  rows += await count(
    `DELETE FROM feed_unmatched_checkpoints c USING dispatches d
      WHERE d.id = ANY($1::uuid[]) AND c.references_ && $2::text[] AND ${SAME_OWNER} AND ${BY_REFERENCE}`,
    [ids, ids.map((id) => id.toLowerCase())], // as `d.id::text` spells it
  );
  // A feed's ignored checkpoints: the dispatch's own (out of its bounds, or it closed), then, as the
  // unmatched ones, those ignored before matching that name it.
  rows += await count('DELETE FROM feed_ignored_checkpoints WHERE dispatch_id = ANY($1::uuid[])', [ids]);
  rows += await count(`DELETE FROM feed_ignored_checkpoints c USING dispatches d WHERE d.id = ANY($1::uuid[]) AND ${SAME_OWNER} AND ${BY_TRACKING_NUMBER}`, [ids]); // prettier-ignore
  rows += await count(
    `DELETE FROM feed_ignored_checkpoints c USING dispatches d
      WHERE d.id = ANY($1::uuid[]) AND c.references_ && $2::text[] AND ${SAME_OWNER} AND ${BY_REFERENCE}`,
    [ids, ids],
  );
  rows += await count('DELETE FROM dashboard_form_submissions WHERE dispatch_id = ANY($1::uuid[])', [ids]);
  await client.query('UPDATE transit_history SET dispatch_id = NULL WHERE dispatch_id = ANY($1::uuid[])', [ids]);
  const dispatches = await count('DELETE FROM dispatches WHERE id = ANY($1::uuid[])', [ids]);
  return { rows: rows + dispatches, dispatches };
}

/**
 * Per table, how many rows still name the dispatch (after an erasure, every count is 0). Deliveries,
 * attempts and gate rows are found through their webhook events and tracking links; idempotency
 * records by the id in their stored body itself, not by the `dispatch_ids` erasure reads, so the
 * proof does not rest on what erasure relied on. The count of Temporal runs is the caller's to add
 * (temporal/erasure.ts countDispatchRuns).
 */
export async function dispatchFootprint(pool: Pool, dispatchId: string): Promise<Footprint> {
  const { rows } = await pool.query<Record<FootprintTable, number>>(
    `WITH events AS (SELECT id FROM webhook_events WHERE dispatch_id = $1::uuid),
          links AS (SELECT id FROM tracking_links WHERE dispatch_id = $1::uuid)
     SELECT (SELECT count(*) FROM delivery_attempts WHERE event_id IN (SELECT id FROM events))::int AS delivery_attempts,
            (SELECT count(*) FROM webhook_deliveries WHERE event_id IN (SELECT id FROM events))::int AS webhook_deliveries,
            (SELECT count(*) FROM webhook_replays WHERE event_id IN (SELECT id FROM events))::int AS webhook_replays,
            (SELECT count(*) FROM events)::int AS webhook_events,
            (SELECT count(*) FROM tracking_gate_failures WHERE link_id IN (SELECT id FROM links))::int AS tracking_gate_failures,
            (SELECT count(*) FROM tracking_gate_passes WHERE link_id IN (SELECT id FROM links))::int AS tracking_gate_passes,
            (SELECT count(*) FROM links)::int AS tracking_links,
            (SELECT count(*) FROM prediction_log WHERE dispatch_id = $1::uuid)::int AS prediction_log,
            (SELECT count(*) FROM carrier_events WHERE dispatch_id = $1::uuid)::int AS carrier_events,
            (SELECT count(*) FROM idempotency_keys WHERE strpos(body, $1::text) > 0)::int AS idempotency_keys,
            (SELECT count(*) FROM dispatches WHERE id = $1::uuid)::int AS dispatches,
            (SELECT count(*) FROM feed_unmatched_checkpoints c JOIN dispatches d ON d.id = $1::uuid AND ${CHECKPOINT_NAMES_DISPATCH})::int AS feed_unmatched_checkpoints,
            (SELECT count(*) FROM feed_ignored_checkpoints c
              WHERE c.dispatch_id = $1::uuid
                 OR EXISTS (SELECT 1 FROM dispatches d WHERE d.id = $1::uuid AND ${CHECKPOINT_NAMES_DISPATCH}))::int AS feed_ignored_checkpoints,
            (SELECT count(*) FROM dashboard_form_submissions WHERE dispatch_id = $1::uuid)::int AS dashboard_form_submissions,
            (SELECT count(*) FROM transit_history WHERE dispatch_id = $1::uuid)::int AS transit_history`,
    [dispatchId.toLowerCase()],
  );
  return rows[0]!;
}
