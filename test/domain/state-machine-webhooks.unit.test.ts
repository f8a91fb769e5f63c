// What a projected change fires (domain/webhook-events.ts): the transition's webhook events, then
// delivery.predicted when the window or its confidence changed, each keyed by dispatch, version and
// type and stamped with the write's one timestamp.
import { describe, expect, it } from '@jest/globals';
import type { Prediction } from '../../domain/prediction.js';
import type { StatusRecord } from '../../domain/schemas.js';
import { predictionChanged, webhookEventsFired, type ChangeToProject } from '../../domain/webhook-events.js';

const DISPATCH_ID = '6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60';
const TIMESTAMP = '2026-11-24T10:15:00.000Z';
const window = { min: '2026-11-26', max: '2026-11-28' };
const prediction: Prediction = { window, confidence: 'Medium' };
const record = { id: DISPATCH_ID, status: 'in_transit' } as unknown as StatusRecord;

function change(overrides: Partial<ChangeToProject> = {}): ChangeToProject {
  return {
    dispatchId: DISPATCH_ID,
    version: 3,
    transitionEvents: ['status.updated'],
    previousPrediction: prediction,
    prediction,
    record,
    timestamp: TIMESTAMP,
    ...overrides,
  };
}

const types = (c: ChangeToProject) => webhookEventsFired(c).map((event) => event.type);

describe('webhookEventsFired', () => {
  it("fires the transition's events in the transition's order", () => {
    expect(types(change({ transitionEvents: ['status.updated', 'delivery.completed'] }))).toEqual(['status.updated', 'delivery.completed']);
  });

  it('keys each event <dispatchId>:<version>:<type>', () => {
    const keys = webhookEventsFired(change({ transitionEvents: ['status.updated', 'delivery.exception'] })).map((e) => e.idempotencyKey);
    expect(keys).toEqual([`${DISPATCH_ID}:3:status.updated`, `${DISPATCH_ID}:3:delivery.exception`]);
  });

  it('gives every event the timestamp the write fixed and the version record as data', () => {
    const events = webhookEventsFired(change({ transitionEvents: ['status.updated'], previousPrediction: undefined }));
    expect(events).toHaveLength(2);
    for (const event of events) {
      expect(event.timestamp).toBe(TIMESTAMP);
      expect(event.data).toBe(record);
    }
  });

  it('adds delivery.predicted last when the window moves', () => {
    const later = { window: { min: '2026-11-27', max: '2026-11-28' }, confidence: 'Medium' } as const;
    expect(types(change({ prediction: later }))).toEqual(['status.updated', 'delivery.predicted']);
  });

  it('adds delivery.predicted when only the confidence changes', () => {
    expect(types(change({ prediction: { window, confidence: 'High' } }))).toEqual(['status.updated', 'delivery.predicted']);
  });

  it('adds delivery.predicted at registration, where there is no previous prediction', () => {
    const fired = webhookEventsFired(change({ version: 1, transitionEvents: [], previousPrediction: undefined }));
    expect(fired).toEqual([
      { type: 'delivery.predicted', timestamp: TIMESTAMP, data: record, idempotencyKey: `${DISPATCH_ID}:1:delivery.predicted` },
    ]);
  });

  it('fires only delivery.predicted for a re-prediction without a transition', () => {
    const moved = { window: { min: '2026-11-29', max: '2026-12-01' }, confidence: 'Low' } as const;
    expect(types(change({ transitionEvents: undefined, prediction: moved }))).toEqual(['delivery.predicted']);
  });

  it('fires nothing when neither the status nor the prediction changed', () => {
    expect(webhookEventsFired(change({ transitionEvents: [] }))).toEqual([]);
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
