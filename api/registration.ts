// Registering one dispatch (docs/http-contract.md "POST /v1/dispatches"), shared by the single call and by
// each item of a batch so that both behave exactly alike. Registration is update-with-start of the
// dispatch's workflow. Idempotent: the same id with the same body answers `existing` with the
// current record; the same id with another body, or another issuer's (or mode's) id, is a 409
// conflict. The projection answers repeats without touching Temporal; the workflow decides
// everything else, so concurrent registrations agree.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { findDispatch, type DispatchRow } from '../db/dispatches.js';
import { findTombstone } from '../db/erasure-records.js';
import type { Pool } from '../db/pool.js';
import { dispatchDateProblem } from '../domain/input-bounds.js';
import { registrationBody, type StatusRecord } from '../domain/dispatch-schemas.js';
import { toUtc } from '../domain/field-schemas.js';
import type { Config } from '../platform/config.js';
import type { DispatchRegistration } from '../temporal/contract.js';
import { badRequest, conflict, parseOrBadRequest } from './errors.js';
import { normalisedFingerprint, registrationFingerprint } from './fingerprint.js';
import type { CarrierEventIngest } from '../ingest/carrier-events.js';
import type { FeedIngest } from '../ingest/tracking-feeds.js';
import type { ApiKey } from './key-cache.js';
import { dispatchWorkflowOptions, registerDispatch } from '../temporal/client.js';

export interface RegistrationDeps {
  pool: Pool;
  temporal: Client;
  config: Config;
  /** Told each registered dispatch's facts, so its carrier events need not read them (ingest/carrier-events.ts). */
  ingest?: Pick<CarrierEventIngest, 'remember'>;
  /**
   * Applies the tracking-feed checkpoints that arrived before the dispatch was registered
   * (ingest/tracking-feeds.ts, docs/tracking-feeds.md "Matching"): at creation, and again on a
   * repeated registration, so that a crash between the two is mended by the issuer's retry.
   */
  feedIngest?: Pick<FeedIngest, 'applyUnmatched'>;
}

export interface Registered {
  outcome: 'created' | 'existing';
  id: string;
  /** The status record: stored JSON text when answered from the projection, else the workflow's object. */
  record: string | StatusRecord;
}

/**
 * Validates a registration body (400 naming the field) into what the workflow receives; its
 * dispatch_date's bounds are checked by `register`, for a new dispatch only. `now` is the default
 * dispatch date. `assignedId` is the id a body without `id` gets (api/idempotency.ts derives one
 * under an Idempotency-Key); random by default.
 */
export function parseRegistration(body: unknown, key: ApiKey, now = new Date(), assignedId?: string): DispatchRegistration {
  const parsed = parseOrBadRequest(registrationBody, body);
  return {
    id: parsed.id ?? assignedId ?? randomUUID(),
    issuerId: key.issuerId,
    mode: key.mode,
    dispatchDate: parsed.dispatch_date ? toUtc(parsed.dispatch_date) : now.toISOString(),
    destination: parsed.destination,
    locale: parsed.locale,
    carrier: parsed.carrier,
    trackingNumber: parsed.tracking_number,
    reference: parsed.reference,
    fingerprint: registrationFingerprint(parsed),
  };
}

export interface RegisterOptions {
  /** The instant a new dispatch's dispatch_date is bounded by (docs/http-contract.md "Input bounds and integrity promises"). */
  now?: Date;
  /**
   * Told once the registration is past validation and its work begins, the bounds included:
   * api/idempotency.ts `markExecuting`, from which its 4xx answers are kept for replay.
   */
  executing?: () => void;
}

/**
 * Registers a validated dispatch; throws 400 for a new dispatch's dispatch_date out of bounds and 409
 * conflict as ApiErrors, TemporalUnavailable (503) from the client. The bounds are a new dispatch's
 * only: the same id with the same body again answers 200 with the current record however old its
 * dispatch_date has grown (DESIGN §3), another body 409 as ever.
 */
export async function register(
  deps: RegistrationDeps,
  key: ApiKey,
  registration: DispatchRegistration,
  { now = new Date(), executing }: RegisterOptions = {},
): Promise<Registered> {
  const existing = await findDispatch(deps.pool, registration.id);
  if (existing) {
    executing?.();
    const repeat = answerRepeat(key, registration, existing);
    await applyKeptCheckpoints(deps, registration);
    return repeat;
  }
  const outOfBounds = dispatchDateProblem(registration.dispatchDate, now);
  if (outOfBounds) throw badRequest(`dispatch_date: ${outOfBounds}`);
  executing?.();
  // An erased id is never registered again (docs/http-contract.md "Erasure"): its runs are gone from
  // Temporal, which would otherwise start it afresh.
  const tombstone = await findTombstone(deps.pool, registration.id);
  if (tombstone) {
    // Only its owner learns that, and when, it was erased; for anyone else it is an id in use.
    if (tombstone.issuerId !== key.issuerId || tombstone.mode !== key.mode) throw idInUse(registration.id);
    throw conflict(`dispatch id ${registration.id} was erased on ${tombstone.erasedAt.toISOString()}; it cannot be registered again`);
  }

  const result = await registerDispatch(deps.temporal, {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    registration,
    options: dispatchWorkflowOptions(deps.config),
  });
  if (result.outcome === 'closed') {
    // The id belongs to a workflow that has completed: only its projection can still answer.
    const row = await findDispatch(deps.pool, registration.id);
    if (row) return answerRepeat(key, registration, row);
    throw conflict(`dispatch id ${registration.id} has already been used`);
  }
  if (result.outcome === 'conflict') throw conflict(result.reason);
  // A body that passed validation yet can never be projected (docs/states.md "Failures that no retry fixes"): refused, not wedged.
  if (result.outcome === 'rejected') throw badRequest(`this dispatch cannot be registered: ${result.reason}`);
  deps.ingest?.remember({ id: registration.id, issuerId: registration.issuerId, mode: registration.mode, dispatchDate: new Date(registration.dispatchDate) }); // prettier-ignore
  if (result.record === undefined) {
    // A repeat the workflow answered without the record it no longer holds: the projection has it.
    const row = await findDispatch(deps.pool, registration.id);
    if (!row) throw conflict(`dispatch id ${registration.id} has already been used`);
    const repeat = answerRepeat(key, registration, row);
    await applyKeptCheckpoints(deps, registration);
    return repeat;
  }
  await applyKeptCheckpoints(deps, registration);
  return { outcome: result.outcome, id: registration.id, record: result.record };
}

async function applyKeptCheckpoints(deps: RegistrationDeps, registration: DispatchRegistration): Promise<void> {
  await deps.feedIngest?.applyUnmatched({
    id: registration.id,
    issuerId: registration.issuerId,
    mode: registration.mode,
    dispatchDate: registration.dispatchDate,
    countryCode: registration.destination.country_code,
    carrier: registration.carrier ?? null,
    trackingNumber: registration.trackingNumber ?? null,
  });
}

function answerRepeat(key: ApiKey, registration: DispatchRegistration, row: DispatchRow): Registered {
  // Another issuer's (or the other mode's) id is a conflict that says nothing about its owner.
  if (row.issuerId !== key.issuerId || row.mode !== key.mode) throw idInUse(registration.id);
  if (normalisedFingerprint(row.registration) !== registration.fingerprint) {
    throw conflict(`dispatch ${registration.id} was already registered with a different body`);
  }
  return { outcome: 'existing', id: registration.id, record: row.recordJson };
}

/** The conflict for an id of another issuer or mode: it says nothing about its owner. */
function idInUse(id: string) {
  return conflict(`dispatch id ${id} is already in use; omit "id" to have one assigned`);
}
