// Step 2 of a carrier event's path (docs/architecture.md "The path of one carrier event"): how an
// accepted carrier event reaches its dispatch's workflow, whoever sends it — the API's
// POST /v1/dispatches/{id}/events (step 1), the test helpers, and the prediction refresh's own
// `overdue` events. The one module that does it:
// 1. bounds: an occurred_at outside [dispatch_date − 7 days, now + 15 minutes] is refused before
//    anything is recorded (docs/design.md "What the service promises about its inputs"), unless the
//    dispatch is erased: then the answer is `erased` (step 3), whose tombstone is read on this path only;
// 2. the dedupe key (domain/state-machine.ts), the event in UTC;
// 3. the log: carrier_events gets the event (db/carrier-events.ts; a repeat is a no-op there and is
//    answered `duplicate`), before anything else, so that a crash after it loses nothing; for an
//    erased dispatch (its erasure requested or done) nothing is recorded, and the answer is `erased`;
// 4. the signal to the workflow (temporal/client.ts), always, even for a repeat: the workflow
//    dedupes too, and a crash between the log and the signal is mended by the sender's retry.
//    Several events of one dispatch (a tracking feed's history, `ingestMany`) go a chunk at a time:
//    each chunk logged in one statement and sent in one `carrierEvents` signal, in order;
// 5. the closed-dispatch answer, when no workflow runs (docs/states.md "Closed dispatches"):
//    delivered → kept with effect `after_delivery`; completed while resting in exception (or its
//    closed run since deleted from Temporal) → its workflow starts again from the projection's state
//    with this event (signal-with-start), and if the dispatch's erasure was requested meanwhile, the
//    run just started is deleted again; erased → `erased` (the API's 404), nothing kept;
//    terminated or failed → kept with effect `workflow_closed` and answered `closed` (the API's 409).
// Effects are otherwise written by the worker, in the transaction of the change (db/dispatch-changes.ts).
import type { Client } from '@temporalio/client';
import { LRUCache } from 'lru-cache';
import {
  foldedCarrierEvents,
  recordCarrierEvents,
  setCarrierEventEffect,
  type CarrierEventRecord,
  type VocabularyStatus,
} from '../db/carrier-events.js';
import { findDispatch, findProjectedDispatch, type DispatchRow } from '../db/dispatches.js';
import { findTombstone, type Tombstone } from '../db/erasure-records.js';
import type { Pool } from '../db/pool.js';
import { canonicalJson } from '../domain/canonical-json.js';
import { occurredAtProblem } from '../domain/input-bounds.js';
import type { CarrierEventBody } from '../domain/carrier-event-schemas.js';
import { toUtc } from '../domain/field-schemas.js';
import { applyCarrierEvent, dedupeKey, initialState, type DispatchState } from '../domain/state-machine.js';
import type { ExceptionReason } from '../domain/vocabulary.js';
import { dispatchWorkflowEnd, restartDispatch, signalCarrierEvent, signalCarrierEvents } from '../temporal/client.js';
import { carrierEvents } from '../platform/metrics.js';
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

/** The dispatch an event is ingested for: its id, and its dispatch date for the bounds. */
export type IngestDispatch = Pick<DispatchFacts, 'id'> & { dispatchDate: Date | string };

/**
 * The most events one signal carries (ingestMany), and the most bytes of them: a signal's payload
 * stays far below Temporal's 2 MB limit on a blob (and under its 512 KB warning), and a chunk's log
 * statement stays small.
 */
export const SIGNAL_CHUNK_EVENTS = 200;
export const SIGNAL_CHUNK_BYTES = 512 * 1024;

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

    /** Ingests one carrier event of `dispatch` (steps 1–5 of the header): `ingestMany` of one. */
    async ingest(dispatch: IngestDispatch, event: CarrierEventToIngest, now = new Date()): Promise<IngestOutcome> {
      return (await ingestMany(dispatch, [event], now))[0]!;
    },

    ingestMany,
  };

  /**
   * Ingests several carrier events of one `dispatch`, in order (steps 1–5 of the header), a chunk at
   * a time (at most SIGNAL_CHUNK_EVENTS events, SIGNAL_CHUNK_BYTES of signal): each event's bounds
   * checked here, the chunk's in-bound events logged in one statement, then sent in one signal
   * (`carrierEvents`; a chunk of one goes on `carrierEvent`, as POST …/events sends it). When no
   * workflow runs, each event of the chunk gets the closed-dispatch answer in turn, and the events
   * after one that started the workflow again are signalled to it. One outcome per event, in order.
   */
  async function ingestMany(dispatch: IngestDispatch, events: readonly CarrierEventToIngest[], now = new Date()): Promise<IngestOutcome[]> {
    const outcomes: IngestOutcome[] = new Array(events.length);
    let chunk: Array<{ index: number; record: CarrierEventRecord; signalled: CarrierEventInput }> = [];
    let bytes = 0;
    let erased: IngestOutcome | undefined;
    const flush = async () => {
      if (chunk.length === 0) return;
      const taken = chunk;
      chunk = [];
      bytes = 0;
      // Erased meanwhile: every later chunk would find the tombstone too.
      erased ??= await ingestChunk(dispatch.id, taken, outcomes);
    };
    for (const [index, { event: received, original }] of events.entries()) {
      const problem = occurredAtProblem(received.occurred_at, dispatch.dispatchDate, now);
      if (problem) {
        outcomes[index] = { outcome: 'out_of_bounds', problem };
        continue;
      }
      if (erased) {
        outcomes[index] = erased;
        continue;
      }
      // In UTC from here on: Postgres takes no offset beyond ±15:59, RFC 3339 allows ±23:59. An
      // exception sent without reason is `other` (what the state machine acts on), in the log too.
      const reason = received.status === 'exception' ? (received.reason ?? 'other') : received.reason;
      const event = { ...received, occurred_at: toUtc(received.occurred_at), ...(reason ? { reason } : {}) };
      const key = dedupeKey(event);
      const signalled = { ...event, dedupeKey: key } as CarrierEventInput;
      const size = Buffer.byteLength(JSON.stringify(signalled));
      if (chunk.length >= SIGNAL_CHUNK_EVENTS || (chunk.length > 0 && bytes + size > SIGNAL_CHUNK_BYTES)) await flush();
      if (erased) {
        outcomes[index] = erased;
        continue;
      }
      chunk.push({ index, record: { dedupeKey: key, event, ...(original ? { original } : {}) }, signalled });
      bytes += size;
    }
    await flush();
    // The bounds are checked before the log, which is what finds a tombstone, and against facts an
    // API process holds (dispatchFacts) that another process's erasure does not clear: an event for
    // an erased dispatch must get the erased answer, not one naming its dispatch date (and a feed's
    // checkpoint is then stored nowhere). Looked up on this refusing path only.
    const tombstone = !erased && outcomes.some((outcome) => outcome.outcome === 'out_of_bounds') && (await findTombstone(deps.pool, dispatch.id)); // prettier-ignore
    if (tombstone) {
      const answer = await erasedAnswer(dispatch.id, tombstone);
      for (const [index, outcome] of outcomes.entries()) if (outcome.outcome === 'out_of_bounds') outcomes[index] = answer;
    }
    return outcomes;
  }

  /**
   * Logs one chunk (one statement) and signals it (one signal), writing each event's outcome; the
   * erased answer when the dispatch has a tombstone (nothing was recorded).
   */
  async function ingestChunk(
    dispatchId: string,
    chunk: ReadonlyArray<{ index: number; record: CarrierEventRecord; signalled: CarrierEventInput }>,
    outcomes: IngestOutcome[],
  ): Promise<IngestOutcome | undefined> {
    const records = chunk.map((entry) => entry.record);
    const recorded = await recordCarrierEvents(deps.pool, dispatchId, records);
    if (recorded === 'erased') {
      const answer = await erasedAnswer(dispatchId);
      for (const { index } of chunk) outcomes[index] = answer;
      return answer;
    }
    const accepted = (from: number) => {
      for (let i = from; i < chunk.length; i += 1)
        outcomes[chunk[i]!.index] = { outcome: 'accepted', duplicate: recorded[i] !== 'inserted', dedupeKey: chunk[i]!.record.dedupeKey };
    };
    const signalled = chunk.map((entry) => entry.signalled);
    if (await signalChunk(dispatchId, signalled)) {
      accepted(0);
      return undefined;
    }
    // No workflow runs: each event's closed-dispatch answer, in order; once one has started the
    // workflow again, the rest of the chunk is signalled to it.
    for (let i = 0; i < chunk.length; i += 1) {
      const { outcome, restarted } = await closedAnswer(dispatchId, signalled[i]!, recorded[i] !== 'inserted');
      outcomes[chunk[i]!.index] = outcome;
      if (outcome.outcome === 'erased') {
        for (const rest of chunk.slice(i + 1)) outcomes[rest.index] = outcome;
        return outcome;
      }
      if (restarted && i + 1 < chunk.length && (await signalChunk(dispatchId, signalled.slice(i + 1)))) {
        accepted(i + 1);
        return undefined;
      }
    }
    return undefined;
  }

  /** One signal for the chunk: `carrierEvent` for a single event (as before batches), `carrierEvents` for more. */
  function signalChunk(dispatchId: string, events: CarrierEventInput[]): Promise<boolean> {
    return events.length === 1
      ? signalCarrierEvent(deps.temporal, dispatchId, events[0]!)
      : signalCarrierEvents(deps.temporal, dispatchId, events);
  }

  async function closedAnswer(
    dispatchId: string,
    event: CarrierEventInput,
    duplicate: boolean,
  ): Promise<{ outcome: IngestOutcome; restarted?: boolean }> {
    const dedupe = event.dedupeKey;
    // Erased since the event was recorded (the erasure requested, its rows perhaps not yet gone: the
    // run the signal missed is the one it deleted): nothing is kept, whatever the projection says.
    if (await findTombstone(deps.pool, dispatchId)) return { outcome: await erasedAnswer(dispatchId) };
    const projected = await findProjectedDispatch(deps.pool, dispatchId);
    if (projected?.record.status === 'delivered') {
      if (await setCarrierEventEffect(deps.pool, dispatchId, dedupe, 'after_delivery')) carrierEvents.inc({ effect: 'after_delivery' });
      return { outcome: { outcome: 'accepted', duplicate, dedupeKey: dedupe } };
    }
    if (projected && restartable(projected.record.status, await dispatchWorkflowEnd(deps.temporal, dispatchId))) {
      await restartDispatch(deps.temporal, { taskQueue: deps.taskQueue, input: await restartInput(projected, dedupe), event });
      // An erasure requested since the projection was read may have swept the runs before this one
      // started: the run that would outlive it, holding the registration, goes too.
      if (await findTombstone(deps.pool, dispatchId)) {
        await deleteDispatchRuns(deps.temporal, dispatchId);
        return { outcome: await erasedAnswer(dispatchId) };
      }
      return { outcome: { outcome: 'accepted', duplicate, dedupeKey: dedupe }, restarted: true };
    }
    // Decided here, not by a projection activity: counted here (cds_carrier_events_total{effect}), once.
    if (await setCarrierEventEffect(deps.pool, dispatchId, dedupe, 'workflow_closed')) carrierEvents.inc({ effect: 'workflow_closed' });
    return {
      outcome: {
        outcome: 'closed',
        dedupeKey: dedupe,
        message:
          `dispatch ${dispatchId} is closed and was not delivered (its workflow was terminated or failed): ` +
          'the event is recorded but changes nothing',
      },
    };
  }

  /** The answer for an erased dispatch (its erasure requested or done); its facts are forgotten. */
  async function erasedAnswer(dispatchId: string, found?: Tombstone): Promise<IngestOutcome> {
    facts.delete(dispatchId);
    const tombstone = found ?? (await findTombstone(deps.pool, dispatchId));
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
