// The dispatch state machine (domain/state-machine.ts), one test per rule in its header comment
// (docs/states.md "The status is a function of the set of events"), then
// the rules that must hold for every input, as fast-check properties. The webhook events each
// transition fires are the ones domain/webhook-events.ts decides from the state before and after it
// (with the prediction unchanged, so only the status's events), as the dispatch workflow asks.
import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import type { CarrierEventBody } from '../../domain/carrier-event-schemas.js';
import {
  applyCarrierEvent as applyToState,
  dedupeKey,
  initialState,
  normaliseTimestamp,
  recommendedActionFor,
  stateShowing,
  statusOf,
  webhookEventsOf,
  type DispatchState,
} from '../../domain/state-machine.js';
import type { DispatchStatus, WebhookEventType } from '../../domain/vocabulary.js';

const DISPATCHED_AT = '2026-11-20T10:00:00.000Z';

function event(status: DispatchStatus, occurred_at: string, extra: Partial<CarrierEventBody> = {}): CarrierEventBody {
  return { status, occurred_at, ...extra };
}

/** The transition, with the webhook events the change fires. */
function applyCarrierEvent(state: DispatchState, e: CarrierEventBody) {
  const transition = applyToState(state, e);
  const prediction = { window: { min: '2026-11-25', max: '2026-11-27' }, confidence: 'Medium' } as const;
  const events: WebhookEventType[] = webhookEventsOf({ state, prediction }, { state: transition.state, prediction });
  return { ...transition, events };
}

/** A state in `status` since `statusSince`, as the one event that put it there leaves it. */
function stateIn(status: DispatchStatus, statusSince = '2026-11-22T10:00:00.000Z'): DispatchState {
  return stateShowing(status === 'exception' ? { status, statusSince, exceptionReason: 'postal_delay' } : { status, statusSince });
}

/** The state as the projection shows it, without the event summary. */
function visible(state: DispatchState): Omit<DispatchState, 'seen'> {
  const { seen: _seen, ...rest } = state;
  return rest;
}

describe('initial state', () => {
  it('starts dispatched, since the dispatch date, normalised to UTC', () => {
    expect(visible(initialState('2026-11-20T11:00:00+01:00'))).toEqual({ status: 'dispatched', statusSince: DISPATCHED_AT });
  });
});

describe('forward moves', () => {
  it('moves dispatched → in_transit and fires status.updated', () => {
    const transition = applyCarrierEvent(initialState(DISPATCHED_AT), event('in_transit', '2026-11-21T08:00:00Z'));
    expect(transition.effect).toBe('applied');
    expect(visible(transition.state)).toEqual({ status: 'in_transit', statusSince: '2026-11-21T08:00:00.000Z' });
    expect(transition.events).toEqual(['status.updated']);
  });

  it('moves in_transit → out_for_delivery and fires status.updated', () => {
    const transition = applyCarrierEvent(stateIn('in_transit'), event('out_for_delivery', '2026-11-24T07:00:00Z'));
    expect(transition.state.status).toBe('out_for_delivery');
    expect(transition.events).toEqual(['status.updated']);
  });

  it('moves out_for_delivery → delivered and fires status.updated then delivery.completed', () => {
    const transition = applyCarrierEvent(stateIn('out_for_delivery'), event('delivered', '2026-11-24T11:00:00Z'));
    expect(visible(transition.state)).toEqual({ status: 'delivered', statusSince: '2026-11-24T11:00:00.000Z' });
    expect(transition.events).toEqual(['status.updated', 'delivery.completed']);
  });

  it('may skip states (dispatched → out_for_delivery) with a single status.updated', () => {
    const transition = applyCarrierEvent(initialState(DISPATCHED_AT), event('out_for_delivery', '2026-11-23T07:00:00Z'));
    expect(transition.effect).toBe('applied');
    expect(transition.state.status).toBe('out_for_delivery');
    expect(transition.events).toEqual(['status.updated']);
  });

  it('may skip straight to delivered, which still fires delivery.completed', () => {
    const transition = applyCarrierEvent(initialState(DISPATCHED_AT), event('delivered', '2026-11-23T12:00:00Z'));
    expect(transition.events).toEqual(['status.updated', 'delivery.completed']);
  });
});

describe('exception', () => {
  it.each(['dispatched', 'in_transit', 'out_for_delivery'] as const)(
    'is entered from %s, firing status.updated and delivery.exception',
    (from) => {
      const transition = applyCarrierEvent(stateIn(from), event('exception', '2026-11-25T09:00:00Z', { reason: 'failed_attempt' }));
      expect(transition.effect).toBe('applied');
      expect(visible(transition.state)).toEqual({
        status: 'exception',
        statusSince: '2026-11-25T09:00:00.000Z',
        exceptionReason: 'failed_attempt',
      });
      expect(transition.events).toEqual(['status.updated', 'delivery.exception']);
    },
  );

  it('records reason other when the carrier gives none', () => {
    const transition = applyCarrierEvent(stateIn('in_transit'), event('exception', '2026-11-25T09:00:00Z'));
    expect(transition.state.exceptionReason).toBe('other');
  });

  it('is not entered from delivered', () => {
    const delivered = stateIn('delivered');
    const transition = applyCarrierEvent(delivered, event('exception', '2026-11-25T09:00:00Z', { reason: 'lost' }));
    expect(transition.state).toBe(delivered);
    expect(transition.events).toEqual([]);
  });

  it.each(['dispatched', 'in_transit', 'out_for_delivery', 'delivered'] as const)(
    'is left by a later %s event, which fires status.updated and forgets the reason',
    (to) => {
      const transition = applyCarrierEvent(stateIn('exception'), event(to, '2026-11-26T09:00:00Z'));
      expect(transition.effect).toBe('applied');
      expect(visible(transition.state)).toEqual({ status: to, statusSince: '2026-11-26T09:00:00.000Z' });
      expect(transition.events[0]).toBe('status.updated');
    },
  );

  it('fires delivery.exception again, but no status.updated, on a new exception while in exception', () => {
    const transition = applyCarrierEvent(stateIn('exception'), event('exception', '2026-11-26T09:00:00Z', { reason: 'failed_attempt' }));
    expect(transition.effect).toBe('exception_repeated');
    expect(transition.events).toEqual(['delivery.exception']);
    expect(visible(transition.state)).toEqual({
      status: 'exception',
      statusSince: '2026-11-26T09:00:00.000Z',
      exceptionReason: 'failed_attempt',
    });
  });
});

describe('delivered is terminal', () => {
  it.each(['dispatched', 'in_transit', 'out_for_delivery', 'delivered', 'exception'] as const)(
    'ignores a later %s event after delivery',
    (status) => {
      const delivered = stateIn('delivered');
      const transition = applyCarrierEvent(delivered, event(status, '2026-11-30T09:00:00Z'));
      expect(transition).toEqual({ state: delivered, effect: 'after_delivery', events: [] });
    },
  );
});

describe('out-of-order events (the status is a function of the set of events)', () => {
  it('counts a scan dated before registration: dispatched → in_transit', () => {
    const registeredAt = '2026-11-24T10:00:00.000Z';
    const transition = applyCarrierEvent(initialState(registeredAt), event('in_transit', '2026-11-24T09:58:00Z'));
    expect(transition.effect).toBe('applied');
    expect(visible(transition.state)).toEqual({ status: 'in_transit', statusSince: '2026-11-24T09:58:00.000Z' });
    expect(transition.events).toEqual(['status.updated']);
  });

  it('counts a higher forward scan dated before the current status', () => {
    const current = applyCarrierEvent(initialState(DISPATCHED_AT), event('in_transit', '2026-11-22T10:00:00Z')).state;
    const transition = applyCarrierEvent(current, event('out_for_delivery', '2026-11-22T09:59:59Z'));
    expect(transition.effect).toBe('applied');
    expect(transition.state.status).toBe('out_for_delivery');
  });

  it('keeps the exception when a forward scan is dated before it, whatever the arrival order', () => {
    const inException = applyCarrierEvent(
      initialState(DISPATCHED_AT),
      event('exception', '2026-11-23T10:00:00Z', { reason: 'lost' }),
    ).state;
    const transition = applyCarrierEvent(inException, event('in_transit', '2026-11-22T10:00:00Z'));
    expect(transition).toMatchObject({ effect: 'stale', events: [] });
    expect(visible(transition.state)).toEqual(visible(inException));
  });

  it('compares occurred_at as instants, whatever their offsets', () => {
    const inException = applyCarrierEvent(initialState(DISPATCHED_AT), event('exception', '2026-11-22T10:00:00Z')).state;
    // 11:30+02:00 is 09:30Z, before the exception's 10:00Z.
    expect(applyCarrierEvent(inException, event('in_transit', '2026-11-22T11:30:00+02:00')).effect).toBe('stale');
    // 08:30-02:00 is 10:30Z, after it.
    expect(applyCarrierEvent(inException, event('in_transit', '2026-11-22T08:30:00-02:00')).effect).toBe('applied');
  });

  it('ignores an exception older than the current forward status', () => {
    const current = stateIn('out_for_delivery', '2026-11-22T10:00:00.000Z');
    const transition = applyCarrierEvent(current, event('exception', '2026-11-21T10:00:00Z', { reason: 'lost' }));
    expect(transition.effect).toBe('stale');
    expect(transition.state.status).toBe('out_for_delivery');
  });

  it('enters exception when an exception is dated after every forward scan, even if it arrives last', () => {
    let state = initialState(DISPATCHED_AT);
    state = applyCarrierEvent(state, event('in_transit', '2026-11-21T10:00:00Z')).state;
    const transition = applyCarrierEvent(state, event('exception', '2026-11-22T10:00:00Z', { reason: 'failed_attempt' }));
    expect(transition.effect).toBe('applied');
    expect(transition.events).toEqual(['status.updated', 'delivery.exception']);
  });

  it('ignores a newer forward status below the current one (outside exception)', () => {
    const current = stateIn('out_for_delivery');
    const transition = applyCarrierEvent(current, event('in_transit', '2026-11-23T10:00:00Z'));
    expect(transition).toMatchObject({ effect: 'backward', events: [] });
    expect(visible(transition.state)).toEqual(visible(current));
  });

  it('leaves the card unchanged on a newer event with the same status', () => {
    const current = stateIn('in_transit');
    const transition = applyCarrierEvent(current, event('in_transit', '2026-11-23T10:00:00Z'));
    expect(transition).toMatchObject({ effect: 'unchanged', events: [] });
    expect(transition.state.status).toBe('in_transit');
  });
});

// ---------- properties: for every set of events within the bounds ----------

const STATUSES: DispatchStatus[] = ['dispatched', 'in_transit', 'out_for_delivery', 'delivered', 'exception'];
const REASONS = ['failed_attempt', 'postal_delay', 'address_issue', 'damaged', 'lost', 'returned', 'other'] as const;
const RANK: Record<DispatchStatus, number> = { dispatched: 0, in_transit: 1, out_for_delivery: 2, delivered: 3, exception: -1 };
const BASE = Date.parse(DISPATCHED_AT);

/** An event within [dispatch_date − 7 days, dispatch_date + 30 days], on a coarse grid so that ties happen. */
const carrierEvent = fc.record({
  status: fc.constantFrom(...STATUSES),
  minutes: fc.integer({ min: -7 * 24 * 4, max: 30 * 24 * 4 }).map((q) => q * 15),
  reason: fc.option(fc.constantFrom(...REASONS), { nil: undefined }),
});
/** Some events, some of them repeated (a carrier resends). */
const eventSet = fc
  .array(carrierEvent, { minLength: 0, maxLength: 12 })
  .chain((events) =>
    fc
      .array(fc.nat({ max: Math.max(events.length - 1, 0) }), { maxLength: events.length > 0 ? 4 : 0 })
      .map((dups) => [...events, ...dups.map((i) => events[i]!)]),
  )
  .map((events) =>
    events.map(({ status, minutes, reason }) =>
      event(status, new Date(BASE + minutes * 60_000).toISOString(), status === 'exception' && reason ? { reason } : {}),
    ),
  );

function foldAll(events: CarrierEventBody[]): DispatchState {
  return events.reduce((state, e) => applyCarrierEvent(state, e).state, initialState(DISPATCHED_AT));
}

describe('properties of the state machine', () => {
  it('ends in the same status and exception reason for every permutation of the same events', () => {
    fc.assert(
      fc.property(
        eventSet.chain((events) =>
          fc.tuple(fc.constant(events), fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length })),
        ),
        ([events, permuted]) => {
          const a = foldAll(events);
          const b = foldAll(permuted);
          expect([b.status, b.exceptionReason]).toEqual([a.status, a.exceptionReason]);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('gives the status the order-independent rule of docs/states.md names for the set', () => {
    fc.assert(
      fc.property(eventSet, (events) => {
        const at = (e: CarrierEventBody) => Date.parse(e.occurred_at);
        const exceptions = events.filter((e) => e.status === 'exception');
        const latestException = Math.max(-Infinity, ...exceptions.map(at));
        const laterForward = events.filter((e) => e.status !== 'exception' && e.status !== 'delivered' && at(e) > latestException);
        const expected = events.some((e) => e.status === 'delivered')
          ? 'delivered'
          : laterForward.length > 0
            ? laterForward.reduce((best, e) => (RANK[e.status] > RANK[best] ? e.status : best), laterForward[0]!.status)
            : exceptions.length > 0
              ? 'exception'
              : 'dispatched';
        expect(foldAll(events).status).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('never leaves delivered', () => {
    fc.assert(
      fc.property(eventSet, eventSet, (before, after) => {
        const delivered = applyCarrierEvent(foldAll(before), event('delivered', new Date(BASE + 3_600_000).toISOString())).state;
        expect(delivered.status).toBe('delivered');
        for (const e of after) expect(applyCarrierEvent(delivered, e)).toMatchObject({ effect: 'after_delivery', events: [] });
      }),
    );
  });

  it('never moves down in rank on a forward event, except out of exception', () => {
    fc.assert(
      fc.property(eventSet, carrierEvent, (events, next) => {
        fc.pre(next.status !== 'exception');
        const before = foldAll(events);
        const after = applyCarrierEvent(before, event(next.status, new Date(BASE + next.minutes * 60_000).toISOString())).state;
        if (before.status !== 'exception') expect(RANK[after.status]).toBeGreaterThanOrEqual(RANK[before.status]);
      }),
      { numRuns: 2000 },
    );
  });

  it('fires status.updated exactly when the status changes, and delivery.exception on entering exception', () => {
    fc.assert(
      fc.property(eventSet, (events) => {
        let state = initialState(DISPATCHED_AT);
        for (const e of events) {
          const transition = applyCarrierEvent(state, e);
          const changed = transition.state.status !== state.status;
          expect(transition.events.includes('status.updated')).toBe(changed);
          if (changed && transition.state.status === 'exception') expect(transition.events).toContain('delivery.exception');
          if (changed && transition.state.status === 'delivered') expect(transition.events).toContain('delivery.completed');
          state = transition.state;
        }
      }),
    );
  });
});

describe('stateShowing', () => {
  it('gives a set whose status is the one shown, for every status, instant and reason', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...STATUSES),
        fc.integer({ min: 0, max: 60 * 24 * 3600 }),
        fc.constantFrom(...REASONS),
        (status, seconds, reason) => {
          const statusSince = new Date(BASE + seconds * 1000).toISOString();
          const current = status === 'exception' ? { status, statusSince, exceptionReason: reason } : { status, statusSince };
          expect(statusOf(stateShowing(current).seen, DISPATCHED_AT)).toEqual(
            status === 'dispatched' ? { status, statusSince: DISPATCHED_AT } : current,
          );
        },
      ),
    );
  });
});

describe('dedupeKey', () => {
  it('is the carrier event_id when there is one, whatever the status or time', () => {
    expect(dedupeKey(event('in_transit', '2026-11-21T08:00:00Z', { event_id: 'evt-1' }))).toBe(
      dedupeKey(event('delivered', '2026-11-24T08:00:00Z', { event_id: 'evt-1' })),
    );
    expect(dedupeKey(event('in_transit', '2026-11-21T08:00:00Z', { event_id: 'evt-1' }))).not.toBe(
      dedupeKey(event('in_transit', '2026-11-21T08:00:00Z', { event_id: 'evt-2' })),
    );
  });

  it('is status + instant without an event_id, the same instant written with any offset', () => {
    expect(dedupeKey(event('in_transit', '2026-11-21T08:00:00Z'))).toBe(dedupeKey(event('in_transit', '2026-11-21T10:00:00+02:00')));
    expect(dedupeKey(event('in_transit', '2026-11-21T08:00:00Z'))).toBe(dedupeKey(event('in_transit', '2026-11-21T08:00:00.000Z')));
  });

  it('tells apart two events without event_id that differ by status or by instant', () => {
    const key = dedupeKey(event('in_transit', '2026-11-21T08:00:00Z'));
    expect(dedupeKey(event('exception', '2026-11-21T08:00:00Z'))).not.toBe(key);
    expect(dedupeKey(event('in_transit', '2026-11-21T08:00:01Z'))).not.toBe(key);
  });

  it('does not confuse an event_id with a status + instant key', () => {
    const timeKey = dedupeKey(event('in_transit', '2026-11-21T08:00:00Z'));
    expect(dedupeKey(event('in_transit', '2026-11-21T08:00:00Z', { event_id: timeKey }))).not.toBe(timeKey);
  });
});

describe('normaliseTimestamp', () => {
  it('writes any offset as UTC with milliseconds', () => {
    expect(normaliseTimestamp('2026-11-21T10:00:00+02:00')).toBe('2026-11-21T08:00:00.000Z');
  });
});

describe('recommendedActionFor', () => {
  it('is Activate when delivered, ContactSupport in exception, None otherwise', () => {
    expect(recommendedActionFor('delivered')).toBe('Activate');
    expect(recommendedActionFor('exception')).toBe('ContactSupport');
    for (const status of ['dispatched', 'in_transit', 'out_for_delivery'] as const) expect(recommendedActionFor(status)).toBe('None');
  });
});
