// A tracking feed's checkpoints into carrier events (docs/tracking-feeds.md, DESIGN §10): what the
// inbound endpoint (api/routes/inbound.ts) hands over once the provider's module has authenticated
// and read the body, and what a registration hands over for the checkpoints that arrived before it.
// Every checkpoint that becomes a carrier event goes through ingest/carrier-events.ts, the one way
// in (bounds, dedupe key, the log before the signal, the closed-dispatch answer); this module only
// decides which dispatch a checkpoint belongs to and what it counts as:
// - `ignored`: the provider's status says nothing about the card (no mapping), or it has no time, or
//   its tracking is not in the provider's shape (one of a Ship24 group: `malformed`, the others still
//   apply), or its time lies outside the dispatch's bounds, or the dispatch is closed (counted and listed with
//   why, kept 30 days; not refused: the provider cannot correct it; one sent again in a usable form
//   under the same event id is applied then and leaves the list), or the dispatch
//   is erased (counted only: nothing of it is kept). All of a request's are kept in one statement,
//   made only when there are some;
// - `duplicate`: its carrier event is logged and its workflow has recorded what it did with it
//   (answered by the one matching statement, db/feed-checkpoints.ts, so a body of seen checkpoints
//   costs no Temporal call); one logged but not yet folded goes through ingest again, whose log
//   insert is a no-op and whose signal the workflow dedupes: a crash between log and signal is
//   mended by the provider's retry;
// - `unmatched`: no dispatch of the feed's issuer and mode matches yet: kept 30 days, applied when one
//   is registered (`applyUnmatched`, called by api/registration.ts);
// - `applied`: a new carrier event, logged and signalled.
import {
  dropIgnored,
  dropUnmatched,
  keepIgnored,
  keepUnmatched,
  matchCandidates,
  unmatchedFor,
  type IgnoredCheckpoint,
  type KeptCheckpoint,
  type MatchCandidate,
  type UnmatchedCheckpoint,
} from '../db/feed-checkpoints.js';
import type { VocabularyStatus } from '../db/carrier-events.js';
import { namesErased } from '../db/erasure-records.js';
import type { Pool } from '../db/pool.js';
import type { InboundFeed } from '../db/tracking-feeds.js';
import { dedupeKey } from '../domain/state-machine.js';
import type { IgnoreReason } from '../domain/tracking-feed-schemas.js';
import { checkpointOccurredAt } from '../domain/tracking-feeds/index.js';
import {
  carriersAgree,
  normaliseTrackingNumber,
  type CheckpointTime,
  type MappedCheckpointStatus,
  type ProviderCheckpoint,
  type ProviderTracking,
} from '../domain/tracking-feeds/provider.js';
import type { DispatchStatus, ExceptionReason } from '../domain/vocabulary.js';
import type { CarrierEventIngest, CarrierEventToIngest } from './carrier-events.js';

export const CHECKPOINT_RESULTS = ['applied', 'duplicate', 'unmatched', 'ignored'] as const;
export type CheckpointResult = (typeof CHECKPOINT_RESULTS)[number];
export type FeedReceipt = { received: number } & Record<CheckpointResult, number>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A dispatch as registered, for the checkpoints kept before it was. */
export interface RegisteredDispatch {
  id: string;
  issuerId: string;
  mode: 'live' | 'test';
  dispatchDate: string | Date;
  countryCode: string;
  carrier?: string | null;
  trackingNumber?: string | null;
}

/** A checkpoint as the ignored list names it. */
type ListedKey = Pick<IgnoredCheckpoint, 'feedId' | 'trackingNumber' | 'eventId'>;

export function createFeedIngest(deps: {
  pool: Pool;
  ingest: Pick<CarrierEventIngest, 'ingestMany'>;
  /**
   * Told how many checkpoints a registration's kept ones added to a feed's ignored list (its
   * `ignored` count, api/feed-counts.ts, and the metric under the feed's provider); an inbound
   * request's are counted by its receipt.
   */
  countIgnored?: (feed: { id: string; provider: string }, count: number) => void;
}) {
  return {
    /** Takes every checkpoint of an authenticated, parsed body; resolves once each is durable. */
    async receive(feed: Pick<InboundFeed, 'id' | 'issuerId' | 'mode'>, trackings: readonly ProviderTracking[]): Promise<FeedReceipt> {
      const receipt: FeedReceipt = { received: 0, applied: 0, duplicate: 0, unmatched: 0, ignored: 0 };
      const ignored: IgnoredCheckpoint[] = [];
      const applied: ListedKey[] = [];
      const receivedAt = new Date();
      for (const tracking of trackings) {
        receipt.received += tracking.checkpoints.length;
        for (const result of await receiveTracking(feed, tracking, receivedAt, ignored, applied)) receipt[result] += 1;
      }
      await keepIgnored(deps.pool, ignored);
      await dropIgnored(deps.pool, applied);
      return receipt;
    },

    applyUnmatched,
  };

  /**
   * Applies the checkpoints kept for a dispatch just registered (its webhooks fire then) and
   * deletes them; one its bounds or its closed workflow refuses is listed as ignored (and counted,
   * once: a repeat of the registration, or of this step after a crash, finds it listed already).
   * Returns how many became its carrier events.
   */
  async function applyUnmatched(dispatch: RegisteredDispatch): Promise<number> {
    const tracking = dispatch.trackingNumber ? normaliseTrackingNumber(dispatch.trackingNumber) : null;
    const kept = await unmatchedFor(deps.pool, { id: dispatch.id, issuerId: dispatch.issuerId, mode: dispatch.mode, trackingNumber: tracking }); // prettier-ignore
    const candidate: MatchCandidate = {
      id: dispatch.id,
      dispatchDate: new Date(dispatch.dispatchDate),
      countryCode: dispatch.countryCode,
      carrier: dispatch.carrier ?? null,
      byReference: false,
      settled: new Set(),
    };
    // The other dispatches with the number (read only when a kept checkpoint names no reference): a
    // kept checkpoint is this one's only if the rule among them all picks it (an older checkpoint of
    // a recycled number is not).
    const byNumber = kept.some((checkpoint) => !checkpoint.references.includes(dispatch.id));
    const numbered = tracking && byNumber ? await matchCandidates(deps.pool, { issuerId: dispatch.issuerId, mode: dispatch.mode, references: [], trackingNumber: tracking, dedupeKeys: [] }) : []; // prettier-ignore
    const sharing = numbered.some((other) => other.id === dispatch.id) ? numbered : [candidate, ...numbered];
    const taken: KeptCheckpoint[] = [];
    const ignored: IgnoredCheckpoint[] = [];
    const applied: KeptCheckpoint[] = [];
    const mine: Array<{ checkpoint: KeptCheckpoint; event: CarrierEventToIngest }> = [];
    for (const checkpoint of kept) {
      const byReference = checkpoint.references.includes(dispatch.id);
      const time = checkpoint.time as CheckpointTime;
      const match = byReference ? candidate : pickByTrackingNumber(sharing, checkpoint.carrier ?? undefined, time, checkpoint.receivedAt); // prettier-ignore
      if (match?.id !== dispatch.id) continue;
      const occurredAt = checkpointOccurredAt(time, match.countryCode, checkpoint.receivedAt);
      mine.push({ checkpoint, event: toCarrierEvent({ ...checkpoint, status: checkpoint.status as DispatchStatus, reason: checkpoint.reason as ExceptionReason | null }, occurredAt) }); // prettier-ignore
    }
    const events = mine.map(({ event }) => event);
    const outcomes = await deps.ingest.ingestMany(candidate, events);
    for (const [i, outcome] of outcomes.entries()) {
      const { checkpoint } = mine[i]!;
      taken.push(checkpoint);
      // Erased meanwhile: nothing of it is kept (docs/privacy.md "Erasure").
      if (outcome.outcome === 'out_of_bounds')
        ignored.push(keptIgnored(checkpoint, dispatch.id, 'out_of_bounds', `outside the time bounds: occurred_at ${outcome.problem}`)); // prettier-ignore
      else if (outcome.outcome === 'closed') ignored.push(keptIgnored(checkpoint, dispatch.id, 'dispatch_closed', outcome.message));
      else if (outcome.outcome !== 'erased') applied.push(checkpoint);
    }
    // Listed, then deleted only once their carrier events are logged: a crash in between applies them
    // again, as duplicates, and lists them again, as repeats (neither counted twice).
    const added = await keepIgnored(deps.pool, ignored);
    for (const [id, { provider, count }] of added) deps.countIgnored?.({ id, provider }, count);
    await dropIgnored(deps.pool, applied);
    await dropUnmatched(deps.pool, taken);
    return applied.length;
  }

  /** The results of a tracking's checkpoints; those to list as ignored are pushed onto `ignored`. */
  async function receiveTracking(
    feed: Pick<InboundFeed, 'id' | 'issuerId' | 'mode'>,
    tracking: ProviderTracking,
    receivedAt: Date,
    ignored: IgnoredCheckpoint[],
    applied: ListedKey[],
  ): Promise<CheckpointResult[]> {
    const results: CheckpointResult[] = [];
    const trackingNumber = normaliseTrackingNumber(tracking.trackingNumber);
    const references = tracking.references.filter((reference) => UUID.test(reference)).map((reference) => reference.toLowerCase());
    const ignore = (checkpoint: ProviderCheckpoint, reason: IgnoreReason, message: string, dispatchId: string | null = null) => {
      results.push('ignored');
      ignored.push({
        feedId: feed.id,
        issuerId: feed.issuerId,
        mode: feed.mode,
        trackingNumber,
        carrier: tracking.carrier ?? null,
        references,
        dispatchId,
        eventId: checkpoint.eventId,
        status: checkpoint.original.status,
        substatus: checkpoint.original.substatus ?? null,
        originalTime: checkpoint.time?.original ?? checkpoint.unreadableTime ?? null,
        reason,
        message,
      });
    };
    // A tracking not in the provider's shape (inside a body that is): each of its checkpoints listed, none applied.
    if (tracking.malformed) {
      for (const checkpoint of tracking.checkpoints) ignore(checkpoint, 'malformed', `${IGNORED_MESSAGES.malformed}: ${tracking.malformed.message}`); // prettier-ignore
      return results;
    }
    const mapped = tracking.checkpoints.filter(isActionable);
    for (const checkpoint of tracking.checkpoints) {
      if (checkpoint.time === null)
        ignore(checkpoint, 'no_time', checkpoint.unreadableTime === undefined ? IGNORED_MESSAGES.no_time : IGNORED_MESSAGES.unreadable_time); // prettier-ignore
      else if (checkpoint.mapped === null) ignore(checkpoint, 'no_status_mapping', IGNORED_MESSAGES.no_status_mapping);
    }
    if (mapped.length === 0) return results;

    const candidates = await matchCandidates(deps.pool, {
      issuerId: feed.issuerId,
      mode: feed.mode,
      references,
      trackingNumber,
      dedupeKeys: [...new Set(mapped.map((checkpoint) => keyOf(checkpoint)))],
    });
    const seenInBody = new Set<string>();
    const unmatched: UnmatchedCheckpoint[] = [];
    // The new checkpoints of each matched dispatch, in the body's order: ingested together below.
    const toIngest = new Map<string, { match: MatchCandidate; checkpoints: ActionableCheckpoint[]; events: CarrierEventToIngest[] }>();
    let erased: boolean | undefined;
    for (const checkpoint of mapped) {
      const match =
        candidates.find((c) => c.byReference) ?? pickByTrackingNumber(candidates, tracking.carrier, checkpoint.time, receivedAt);
      if (!match) {
        // An erased dispatch's (by a reference, or its tracking number): ignored and stored nowhere (docs/privacy.md "Erasure").
        erased ??= await namesErased(deps.pool, { dispatchIds: references, trackingNumber, issuerId: feed.issuerId, mode: feed.mode });
        if (erased) {
          results.push('ignored');
          continue;
        }
        unmatched.push(toUnmatched(feed, tracking, trackingNumber, checkpoint));
        results.push('unmatched');
        continue;
      }
      const key = keyOf(checkpoint);
      const once = `${match.id}\0${key}`;
      if (match.settled.has(key) || seenInBody.has(once)) {
        results.push('duplicate');
        continue;
      }
      seenInBody.add(once);
      const occurredAt = checkpointOccurredAt(checkpoint.time, match.countryCode, receivedAt);
      const group = toIngest.get(match.id) ?? { match, checkpoints: [], events: [] };
      toIngest.set(match.id, group);
      group.checkpoints.push(checkpoint);
      group.events.push(toCarrierEvent({ ...checkpoint, ...checkpoint.mapped, original: checkpoint.original }, occurredAt));
    }
    for (const { match, checkpoints, events } of toIngest.values()) {
      const outcomes = await deps.ingest.ingestMany(match, events);
      for (const [i, outcome] of outcomes.entries()) {
        const checkpoint = checkpoints[i]!;
        // Erased between the match and the log (docs/http-contract.md "Erasure"): ignored, not stored.
        if (outcome.outcome === 'erased') results.push('ignored');
        else if (outcome.outcome === 'out_of_bounds')
          ignore(checkpoint, 'out_of_bounds', `outside the time bounds: occurred_at ${outcome.problem}`, match.id); // prettier-ignore
        else if (outcome.outcome === 'closed') ignore(checkpoint, 'dispatch_closed', outcome.message, match.id);
        else {
          results.push(outcome.duplicate ? 'duplicate' : 'applied');
          if (!outcome.duplicate) applied.push({ feedId: feed.id, trackingNumber, eventId: checkpoint.eventId });
        }
      }
    }
    if (unmatched.length > 0) {
      await keepUnmatched(deps.pool, unmatched);
      // A registration that committed between the match above and this keep has already looked for
      // kept checkpoints: look again. Each side writes first and then reads the other's table, so
      // one of the two always sees the other (docs/tracking-feeds.md "Matching").
      const [registered] = await matchCandidates(deps.pool, { issuerId: feed.issuerId, mode: feed.mode, references, trackingNumber, dedupeKeys: [] }); // prettier-ignore
      if (registered) {
        await applyUnmatched({ ...registered, issuerId: feed.issuerId, mode: feed.mode, trackingNumber });
      }
    }
    return results;
  }
}

export type FeedIngest = ReturnType<typeof createFeedIngest>;

/** A kept checkpoint its dispatch refused, as the ignored list keeps it. */
function keptIgnored(checkpoint: KeptCheckpoint, dispatchId: string, reason: IgnoreReason, message: string): IgnoredCheckpoint {
  const original = checkpoint.original as ProviderCheckpoint['original'];
  return {
    feedId: checkpoint.feedId,
    issuerId: checkpoint.issuerId,
    mode: checkpoint.mode,
    trackingNumber: checkpoint.trackingNumber,
    carrier: checkpoint.carrier,
    references: checkpoint.references,
    dispatchId,
    eventId: checkpoint.eventId,
    status: original.status,
    substatus: original.substatus ?? null,
    originalTime: (checkpoint.time as CheckpointTime).original,
    reason,
    message,
  };
}

/** The words beside the codes that need no detail (docs/tracking-feeds.md "Ignored checkpoints"). */
const IGNORED_MESSAGES = {
  no_time: 'the checkpoint has no time: the provider sent none',
  unreadable_time: "the checkpoint's time cannot be read: it is not an ISO 8601 date or date-time",
  no_status_mapping: "the provider's status says nothing about where the card is",
  malformed: "its tracking is not in the provider's shape, so none of its checkpoints can be read",
} as const;

/** A checkpoint that can become a carrier event: its status says where the card is, and it has a time. */
type ActionableCheckpoint = ProviderCheckpoint & { mapped: MappedCheckpointStatus; time: CheckpointTime };

function isActionable(checkpoint: ProviderCheckpoint): checkpoint is ActionableCheckpoint {
  return checkpoint.mapped !== null && checkpoint.time !== null;
}

/** The carrier event's dedupe key: the provider's checkpoint id (or the module's stable hash of it). */
function keyOf(checkpoint: Pick<ProviderCheckpoint, 'eventId'>): string {
  return dedupeKey({ event_id: checkpoint.eventId, status: 'in_transit', occurred_at: '' });
}

/**
 * The dispatch a checkpoint belongs to by its tracking number, among those whose carrier agrees where
 * both name one (domain/tracking-feeds/provider.ts carriersAgree: providers and issuers spell carriers
 * differently): the only one, whatever its dispatch date (DESIGN §6: an event up to 7 days before it
 * counts, and one before that is `ignored` by the bounds, not kept as unmatched); among several
 * (numbers are recycled), most recently registered first, the first whose dispatch date is not after
 * the checkpoint.
 */
function pickByTrackingNumber(
  candidates: readonly MatchCandidate[],
  carrier: string | undefined,
  time: CheckpointTime,
  receivedAt: Date,
): MatchCandidate | undefined {
  const agreeing = candidates.filter((candidate) => !candidate.byReference && carriersAgree(carrier, candidate.carrier));
  if (agreeing.length === 1) return agreeing[0];
  return agreeing.find((candidate) => candidate.dispatchDate.getTime() <= Date.parse(checkpointOccurredAt(time, candidate.countryCode, receivedAt))); // prettier-ignore
}

interface CheckpointFacts {
  eventId: string;
  status: DispatchStatus;
  reason?: ExceptionReason | null;
  location?: string | null;
  time: CheckpointTime | unknown;
  original: unknown;
}

function toCarrierEvent(checkpoint: CheckpointFacts, occurredAt: string): CarrierEventToIngest {
  const original = checkpoint.original as { vocabulary: VocabularyStatus['vocabulary']; status: string; substatus?: string };
  const time = checkpoint.time as CheckpointTime;
  return {
    event: {
      status: checkpoint.status,
      occurred_at: occurredAt,
      event_id: checkpoint.eventId,
      ...(checkpoint.reason ? { reason: checkpoint.reason } : {}),
      ...(checkpoint.location ? { location: checkpoint.location } : {}),
    },
    original: {
      vocabulary: original.vocabulary,
      status: original.status,
      ...(original.substatus === undefined ? {} : { substatus: original.substatus }),
      time: time.original,
    },
  };
}

function toUnmatched(
  feed: Pick<InboundFeed, 'id' | 'issuerId' | 'mode'>,
  tracking: ProviderTracking,
  trackingNumber: string,
  checkpoint: ActionableCheckpoint,
): UnmatchedCheckpoint {
  return {
    feedId: feed.id,
    issuerId: feed.issuerId,
    mode: feed.mode,
    trackingNumber,
    carrier: tracking.carrier ?? null,
    references: tracking.references.filter((reference) => UUID.test(reference)).map((reference) => reference.toLowerCase()),
    eventId: checkpoint.eventId,
    status: checkpoint.mapped.status,
    reason: checkpoint.mapped.reason ?? null,
    location: checkpoint.location ?? null,
    time: checkpoint.time,
    original: checkpoint.original,
  };
}
