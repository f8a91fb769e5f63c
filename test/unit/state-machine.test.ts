// The dispatch state machine (domain/state-machine.ts), one test per rule in its header comment
// (spec "States and transitions" + DESIGN.md "States").
import { describe, it, expect } from '@jest/globals';
import {
  applyCarrierEvent,
  dedupeKey,
  initialState,
  normaliseTimestamp,
  recommendedActionFor,
  type DispatchState,
} from '../../domain/state-machine.js';
import type { CarrierEventBody, DispatchStatus } from '../../domain/schemas.js';

const DISPATCHED_AT = '2026-11-20T10:00:00.000Z';

function event(status: DispatchStatus, occurred_at: string, extra: Partial<CarrierEventBody> = {}): CarrierEventBody {
  return { status, occurred_at, ...extra };
}

function stateIn(status: DispatchStatus, statusSince = '2026-11-22T10:00:00.000Z'): DispatchState {
  return status === 'exception' ? { status, statusSince, exceptionReason: 'postal_delay' } : { status, statusSince };
}

describe('initial state', () => {
  it('starts dispatched, since the dispatch date, normalised to UTC', () => {
    expect(initialState('2026-11-20T11:00:00+01:00')).toEqual({ status: 'dispatched', statusSince: DISPATCHED_AT });
  });
});

describe('forward moves', () => {
  it('moves dispatched → in_transit and fires status.updated', () => {
    const transition = applyCarrierEvent(initialState(DISPATCHED_AT), event('in_transit', '2026-11-21T08:00:00Z'));
    expect(transition.effect).toBe('applied');
    expect(transition.state).toEqual({ status: 'in_transit', statusSince: '2026-11-21T08:00:00.000Z' });
    expect(transition.events).toEqual(['status.updated']);
  });

  it('moves in_transit → out_for_delivery and fires status.updated', () => {
    const transition = applyCarrierEvent(stateIn('in_transit'), event('out_for_delivery', '2026-11-24T07:00:00Z'));
    expect(transition.state.status).toBe('out_for_delivery');
    expect(transition.events).toEqual(['status.updated']);
  });

  it('moves out_for_delivery → delivered and fires status.updated then delivery.completed', () => {
    const transition = applyCarrierEvent(stateIn('out_for_delivery'), event('delivered', '2026-11-24T11:00:00Z'));
    expect(transition.state).toEqual({ status: 'delivered', statusSince: '2026-11-24T11:00:00.000Z' });
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
      expect(transition.state).toEqual({ status: 'exception', statusSince: '2026-11-25T09:00:00.000Z', exceptionReason: 'failed_attempt' });
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
      expect(transition.state).toEqual({ status: to, statusSince: '2026-11-26T09:00:00.000Z' });
      expect(transition.events[0]).toBe('status.updated');
    },
  );

  it('fires delivery.exception again, but no status.updated, on a new exception while in exception', () => {
    const transition = applyCarrierEvent(stateIn('exception'), event('exception', '2026-11-26T09:00:00Z', { reason: 'failed_attempt' }));
    expect(transition.effect).toBe('exception_repeated');
    expect(transition.events).toEqual(['delivery.exception']);
    expect(transition.state).toEqual({ status: 'exception', statusSince: '2026-11-26T09:00:00.000Z', exceptionReason: 'failed_attempt' });
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

describe('out-of-order events', () => {
  it('ignores an event older (occurred_at) than the one that set the current status', () => {
    const current = stateIn('in_transit', '2026-11-22T10:00:00.000Z');
    const transition = applyCarrierEvent(current, event('out_for_delivery', '2026-11-22T09:59:59Z'));
    expect(transition).toEqual({ state: current, effect: 'stale', events: [] });
  });

  it('compares occurred_at as instants, whatever their offsets', () => {
    // 11:30+02:00 is 09:30Z, before the current status' 10:00Z.
    const current = stateIn('in_transit', '2026-11-22T10:00:00.000Z');
    expect(applyCarrierEvent(current, event('out_for_delivery', '2026-11-22T11:30:00+02:00')).effect).toBe('stale');
    // 08:30-02:00 is 10:30Z, after it.
    expect(applyCarrierEvent(current, event('out_for_delivery', '2026-11-22T08:30:00-02:00')).effect).toBe('applied');
  });

  it('ignores an older exception too', () => {
    const current = stateIn('out_for_delivery', '2026-11-22T10:00:00.000Z');
    expect(applyCarrierEvent(current, event('exception', '2026-11-21T10:00:00Z', { reason: 'lost' })).effect).toBe('stale');
  });

  it('ignores a newer forward status below the current one (outside exception)', () => {
    const current = stateIn('out_for_delivery');
    const transition = applyCarrierEvent(current, event('in_transit', '2026-11-23T10:00:00Z'));
    expect(transition).toEqual({ state: current, effect: 'backward', events: [] });
  });

  it('leaves the card unchanged on a newer event with the same status', () => {
    const current = stateIn('in_transit');
    const transition = applyCarrierEvent(current, event('in_transit', '2026-11-23T10:00:00Z'));
    expect(transition).toEqual({ state: current, effect: 'unchanged', events: [] });
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
