// Step 2 of a carrier event's path (docs/architecture.md "The path of one carrier event"): how an
// accepted carrier event reaches its dispatch's workflow, whoever sends it — the API's
// POST /v1/dispatches/{id}/events (step 1), the test helpers, and the prediction refresh's own
// `overdue` events. The one module that does it:
// 1. bounds: an occurred_at outside [dispatch_date − 7 days, now + 15 minutes] is refused before
//    anything is recorded (docs/design.md "What the service promises about its inputs");
// 2. the dedupe key (domain/state-machine.ts), the event in UTC;
// 3. the log: carrier_events gets the event (db/carrier-events.ts; a repeat is a no-op there and is
//    answered `duplicate`), before anything else, so that a crash after it loses nothing; for an
//    erased dispatch (its erasure requested or done) nothing is recorded, and the answer is `erased`;
// 4. the signal to the workflow (temporal/client.ts), always, even for a repeat: the workflow
//    dedupes too, and a crash between the log and the signal is mended by the sender's retry;
// 5. the closed-dispatch answer, when no workflow runs (docs/states.md "Closed dispatches"):
//    delivered → kept with effect `after_delivery`; completed while resting in exception (or its
//    closed run since deleted from Temporal) → its workflow starts again from the projection's state
//    with this event (signal-with-start), and if the dispatch's erasure was requested meanwhile, the
//    run just started is deleted again; erased → `erased` (the API's 404), nothing kept;
//    terminated or failed → kept with effect `workflow_closed` and answered `closed` (the API's 409).
// Effects are otherwise written by the worker, in the transaction of the change (db/dispatch-changes.ts).
import type { Client } from '@temporalio/client';
import { LRUCache } from 'lru-cache';
import { foldedCarrierEvents, recordCarrierEvent, setCarrierEventEffect, type VocabularyStatus } from '../db/carrier-events.js';
import { findDispatch, findProjectedDispatch, type DispatchRow } from '../db/dispatches.js';
import { findTombstone } from '../db/erasure-records.js';
import type { Pool } from '../db/pool.js';
import { canonicalJson } from '../domain/canonical-json.js';
import { occurredAtProblem } from '../domain/input-bounds.js';
import type { CarrierEventBody } from '../domain/carrier-event-schemas.js';
import { toUtc } from '../domain/field-schemas.js';
import { applyCarrierEvent, dedupeKey, initialState, type DispatchState } from '../domain/state-machine.js';
import type { ExceptionReason } from '../domain/vocabulary.js';
import { dispatchWorkflowEnd, restartDispatch, signalCarrierEvent } from '../temporal/client.js';
import { deleteDispatchRuns } from '../temporal/erasure.js';
import { erasedMessage } from './erasure.js';
import type { CarrierEventInput, DispatchWorkflowInput } from '../temporal/contract.js';

export interface IngestDeps {
  pool: Pool;
  temporal: Client;
  /** Where a closed dispatch's workflow is started again, and with which options (temporal/client.ts dispatchWorkflowOptions). */
  taskQueue: string;
  workflowOptions: DispatchWorkflowInput['options'];
}

/** What a sender must know of a dispatch before its event is ingested: who owns it, when it left. */
export type DispatchFacts = Pick<DispatchRow, 'id' | 'issuerId' | 'mode' | 'dispatchDate'>;

/** An event in the service's vocabulary; `original` keeps a carrier vocabulary's status as sent. */
export interface CarrierEventToIngest {
  event: Omit<CarrierEventBody, 'reason'> & { reason?: ExceptionReason };
  original?: VocabularyStatus;
}

export type IngestOutcome =
  | { outcome: 'accepted'; duplicate: boolean; dedupeKey: string }
  /** occurred_at lies outside the dispatch's time bounds; `problem` says how (nothing was recorded). */
  | { outcome: 'out_of_bounds'; problem: string }
  /** The workflow was terminated or failed undelivered: the event is kept and changes nothing. */
  | { outcome: 'closed'; message: string; dedupeKey: string }
  /** The dispatch was erased (docs/http-contract.md "Erasure"): nothing was recorded. */
  | { outcome: 'erased'; message: string };

/** Dispatches whose facts an API process keeps: they never change once registered, so never go stale. */
const FACTS_CACHED = 100_000;

export function createCarrierEventIngest(deps: IngestDeps) {
  const facts = new LRUCache<string, DispatchFacts>({ max: FACTS_CACHED });

  return {
    /**
     * The dispatch's facts, or undefined when no dispatch has the id (yet). Held once read: a carrier
     * feed sends several events per card, and owner and dispatch date never change.
     */
    async dispatchFacts(id: string): Promise<DispatchFacts | undefined> {
      const held = facts.get(id);
      if (held) return held;
      const row = await findDispatch(deps.pool, id);
      if (!row) return undefined;
      const found = { id: row.id, issuerId: row.issuerId, mode: row.mode, dispatchDate: row.dispatchDate };
      facts.set(id, found);
      return found;
    },

    /** Holds the facts of a dispatch just registered by this process: its first event reads none. */
    remember(dispatch: DispatchFacts): void {
      facts.set(dispatch.id, dispatch);
    },

    /** Ingests one carrier event of `dispatch` (steps 1–5 of the header). */
    async ingest(
      dispatch: Pick<DispatchFacts, 'id'> & { dispatchDate: Date | string },
      { event: received, original }: CarrierEventToIngest,
      now = new Date(),
    ): Promise<IngestOutcome> {
      const problem = occurredAtProblem(received.occurred_at, dispatch.dispatchDate, now);
      if (problem) return { outcome: 'out_of_bounds', problem };
      // In UTC from here on: Postgres takes no offset beyond ±15:59, RFC 3339 allows ±23:59. An
      // exception sent without reason is `other` (what the state machine acts on), in the log too.
      const reason = received.status === 'exception' ? (received.reason ?? 'other') : received.reason;
      const event = { ...received, occurred_at: toUtc(received.occurred_at), ...(reason ? { reason } : {}) };
      const key = dedupeKey(event);
      const recorded = await recordCarrierEvent(deps.pool, dispatch.id, key, event, original);
      if (recorded === 'erased') return erasedAnswer(dispatch.id);
      const inserted = recorded === 'inserted';
      const signalled: CarrierEventInput = { ...event, dedupeKey: key } as CarrierEventInput;
      if (await signalCarrierEvent(deps.temporal, dispatch.id, signalled))
        return { outcome: 'accepted', duplicate: !inserted, dedupeKey: key };
      return closedAnswer(dispatch.id, signalled, !inserted);
    },
  };

  async function closedAnswer(dispatchId: string, event: CarrierEventInput, duplicate: boolean): Promise<IngestOutcome> {
    const dedupe = event.dedupeKey;
    // Erased since the event was recorded (the erasure requested, its rows perhaps not yet gone: the
    // run the signal missed is the one it deleted): nothing is kept, whatever the projection says.
    if (await findTombstone(deps.pool, dispatchId)) return erasedAnswer(dispatchId);
    const projected = await findProjectedDispatch(deps.pool, dispatchId);
    if (projected?.record.status === 'delivered') {
      await setCarrierEventEffect(deps.pool, dispatchId, dedupe, 'after_delivery');
      return { outcome: 'accepted', duplicate, dedupeKey: dedupe };
    }
    if (projected && restartable(projected.record.status, await dispatchWorkflowEnd(deps.temporal, dispatchId))) {
      await restartDispatch(deps.temporal, { taskQueue: deps.taskQueue, input: await restartInput(projected, dedupe), event });
      // An erasure requested since the projection was read may have swept the runs before this one
      // started: the run that would outlive it, holding the registration, goes too.
      if (await findTombstone(deps.pool, dispatchId)) {
        await deleteDispatchRuns(deps.temporal, dispatchId);
        return erasedAnswer(dispatchId);
      }
      return { outcome: 'accepted', duplicate, dedupeKey: dedupe };
    }
    await setCarrierEventEffect(deps.pool, dispatchId, dedupe, 'workflow_closed');
    return {
      outcome: 'closed',
      dedupeKey: dedupe,
      message:
        `dispatch ${dispatchId} is closed and was not delivered (its workflow was terminated or failed): ` +
        'the event is recorded but changes nothing',
    };
  }

  /** The answer for an erased dispatch (its erasure requested or done); its facts are forgotten. */
  async function erasedAnswer(dispatchId: string): Promise<IngestOutcome> {
    facts.delete(dispatchId);
    const tombstone = await findTombstone(deps.pool, dispatchId);
    return { outcome: 'erased', message: erasedMessage(dispatchId, tombstone?.erasedAt ?? new Date()) };
  }

  /**
   * A completed run restarts; so does one Temporal no longer knows (the namespace's retention, or an
   * operator, deleted the closed run) when the projection says the card rests in exception: only a
   * completed rest leaves a card there without a run (a terminated or failed run is kept as long).
   */
  function restartable(status: string, end: Awaited<ReturnType<typeof dispatchWorkflowEnd>>): boolean {
    return end === 'completed' || (end === 'unknown' && status === 'exception');
  }

  /**
   * The workflow input that carries on from the projection: the registration as stored, the version,
   * prediction and record last projected, and the state folded from the events that counted (the
   * status is a function of that set, docs/states.md), with their dedupe keys. `excluded` is the
   * event the restart brings as its signal.
   */
  async function restartInput(
    row: NonNullable<Awaited<ReturnType<typeof findProjectedDispatch>>>,
    excluded: string,
  ): Promise<DispatchWorkflowInput> {
    const events = (await foldedCarrierEvents(deps.pool, row.id)).filter((e) => e.dedupeKey !== excluded);
    let state: DispatchState = initialState(row.dispatchDate);
    for (const e of events) {
      // An `overdue` reason (the service's own) folds like a carrier's exception.
      const event = { status: e.status, occurred_at: e.occurredAt, ...(e.reason ? { reason: e.reason } : {}) } as CarrierEventBody;
      state = applyCarrierEvent(state, event).state;
    }
    return {
      options: deps.workflowOptions,
      registration: {
        id: row.id,
        issuerId: row.issuerId,
        mode: row.mode,
        dispatchDate: row.dispatchDate,
        destination: { postal_code: row.postalCode, country_code: row.countryCode },
        ...(row.locale === null ? {} : { locale: row.locale }),
        ...(row.carrier === null ? {} : { carrier: row.carrier }),
        ...(row.trackingNumber === null ? {} : { trackingNumber: row.trackingNumber }),
        ...(row.reference === null ? {} : { reference: row.reference }),
        fingerprint: canonicalJson(row.registration),
      },
      carried: {
        state,
        version: row.version,
        prediction: { window: { min: row.windowMin, max: row.windowMax }, confidence: row.confidenceLevel },
        record: row.record,
        seenEventKeys: events.map((e) => e.dedupeKey),
        registeredOnce: true,
        lastEventAt: Date.now(),
      },
    };
  }
}

export type CarrierEventIngest = ReturnType<typeof createCarrierEventIngest>;
