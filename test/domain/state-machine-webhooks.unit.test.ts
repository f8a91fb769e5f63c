// Which webhook events a change fires (domain/state-machine.ts `webhookEventsOf`): the one decision,
// from the dispatch before and after the change, one test per rule of its header, then the rule for
// every sequence of carrier events and predictions (fast-check).
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Prediction } from '../../domain/prediction.js';
import {
  applyCarrierEvent,
  initialState,
  predictionChanged,
  webhookEventsOf,
  type DispatchState,
  type ProjectedDispatch,
} from '../../domain/state-machine.js';
import type { DispatchStatus } from '../../domain/vocabulary.js';

const window = { min: '2026-11-26', max: '2026-11-28' };
const prediction: Prediction = { window, confidence: 'Medium' };
const since = '2026-11-22T10:00:00.000Z';

function side(status: DispatchStatus, overrides: Partial<ProjectedDispatch['state']> = {}, p: Prediction = prediction): ProjectedDispatch {
  return {
    state: { status, statusSince: since, ...(status === 'exception' ? { exceptionReason: 'postal_delay' } : {}), ...overrides },
    prediction: p,
  };
}

describe('webhookEventsOf', () => {
  it('fires only delivery.predicted at registration, where there is no dispatch before', () => {
    expect(webhookEventsOf(undefined, side('dispatched'))).toEqual(['delivery.predicted']);
  });

  it('fires status.updated when the status changes', () => {
    expect(webhookEventsOf(side('dispatched'), side('in_transit'))).toEqual(['status.updated']);
  });

  it('fires status.updated then delivery.exception on entering exception', () => {
    expect(webhookEventsOf(side('in_transit'), side('exception'))).toEqual(['status.updated', 'delivery.exception']);
  });

  it('fires status.updated then delivery.completed on reaching delivered', () => {
    expect(webhookEventsOf(side('out_for_delivery'), side('delivered'))).toEqual(['status.updated', 'delivery.completed']);
  });

  it('fires delivery.exception again for a newer exception while in exception, without status.updated', () => {
    expect(webhookEventsOf(side('exception'), side('exception', { statusSince: '2026-11-23T10:00:00.000Z' }))).toEqual([
      'delivery.exception',
    ]);
  });

  it('fires delivery.exception again for another reason at the same instant', () => {
    expect(webhookEventsOf(side('exception'), side('exception', { exceptionReason: 'lost' }))).toEqual(['delivery.exception']);
  });

  it('adds delivery.predicted last when the window moves', () => {
    const later = { window: { min: '2026-11-27', max: '2026-11-28' }, confidence: 'Medium' } as const;
    expect(webhookEventsOf(side('dispatched'), side('in_transit', {}, later))).toEqual(['status.updated', 'delivery.predicted']);
  });

  it('fires only delivery.predicted for a re-prediction without a change of status', () => {
    expect(webhookEventsOf(side('in_transit'), side('in_transit', {}, { window, confidence: 'High' }))).toEqual(['delivery.predicted']);
  });

  it('fires nothing when neither the status nor the prediction changed', () => {
    expect(webhookEventsOf(side('in_transit'), side('in_transit'))).toEqual([]);
  });
});

describe('webhookEventsOf, for every sequence of carrier events and predictions', () => {
  const STATUSES: DispatchStatus[] = ['dispatched', 'in_transit', 'out_for_delivery', 'delivered', 'exception'];
  const step = fc.record({
    status: fc.constantFrom(...STATUSES),
    hours: fc.integer({ min: -48, max: 400 }),
    reason: fc.constantFrom('failed_attempt', 'postal_delay', 'lost'),
    moved: fc.boolean(),
  });

  it('fires status.updated exactly on a change of status, its companion event, and delivery.predicted exactly on a new prediction', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 15 }), (steps) => {
        let state: DispatchState = initialState('2026-11-20T10:00:00.000Z');
        let current = prediction;
        for (const [i, s] of steps.entries()) {
          const occurred_at = new Date(Date.parse('2026-11-20T10:00:00.000Z') + s.hours * 3_600_000).toISOString();
          const next = applyCarrierEvent(state, {
            status: s.status,
            occurred_at,
            ...(s.status === 'exception' ? { reason: s.reason } : {}),
          }).state;
          const nextPrediction = s.moved ? { window: { min: window.min, max: `2026-12-${String(10 + (i % 18)).padStart(2, '0')}` }, confidence: 'Low' as const } : current; // prettier-ignore
          const fired = webhookEventsOf({ state, prediction: current }, { state: next, prediction: nextPrediction });
          const changed = next.status !== state.status;
          expect(fired.includes('status.updated')).toBe(changed);
          expect(fired.includes('delivery.completed')).toBe(changed && next.status === 'delivered');
          if (changed && next.status === 'exception') expect(fired).toContain('delivery.exception');
          expect(fired.includes('delivery.predicted')).toBe(predictionChanged(current, nextPrediction));
          expect(new Set(fired).size).toBe(fired.length);
          state = next;
          current = nextPrediction;
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('predictionChanged', () => {
  it('is false for an equal window and confidence held in another object', () => {
    expect(predictionChanged(prediction, { window: { ...window }, confidence: 'Medium' })).toBe(false);
  });

  it('is true when only the late end of the window moves', () => {
    expect(predictionChanged(prediction, { window: { min: window.min, max: '2026-11-30' }, confidence: 'Medium' })).toBe(true);
  });
});
