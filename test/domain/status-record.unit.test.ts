// The dispatch status record as built by domain/status-record.ts: exactly the contract's
// fields, in its order, valid against the wire schema.
import { describe, it, expect } from '@jest/globals';
import { buildStatusRecord, type StatusRecordInput } from '../../domain/status-record.js';
import { statusRecord } from '../../domain/dispatch-schemas.js';
import { initialState } from '../../domain/state-machine.js';
import { predict } from '../../domain/prediction.js';
import { renderSuggestion } from '../../domain/messages.js';

const DISPATCHED_AT = '2026-11-20T11:30:00+01:00';
const destination = { postal_code: '75011', country_code: 'FR' };

function sampleInput(): StatusRecordInput {
  const prediction = predict({ dispatchDate: DISPATCHED_AT, destination, state: initialState(DISPATCHED_AT), today: '2026-11-20' });
  const suggestion = renderSuggestion({
    status: 'dispatched',
    window: prediction.window,
    confidence: prediction.confidence,
    countryCode: destination.country_code,
  });
  return {
    id: '6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60',
    status: 'dispatched',
    dispatchDate: DISPATCHED_AT,
    destination,
    prediction,
    suggestion,
  };
}

describe('buildStatusRecord', () => {
  it('passes the wire schema of the status record', () => {
    expect(() => statusRecord.parse(buildStatusRecord(sampleInput()))).not.toThrow();
  });

  it('has exactly the contract’s fields in its order, nested ones included', () => {
    const record = buildStatusRecord(sampleInput());
    expect(Object.keys(record)).toEqual(['id', 'status', 'dispatch_date', 'destination', 'prediction', 'ui_suggestion']);
    expect(Object.keys(record.destination)).toEqual(['postal_code', 'country_code']);
    expect(Object.keys(record.prediction)).toEqual(['delivery_window', 'confidence_level']);
    expect(Object.keys(record.prediction.delivery_window)).toEqual(['min', 'max']);
    expect(Object.keys(record.ui_suggestion)).toEqual(['locale', 'recommended_message', 'recommended_action']);
  });

  it('writes dispatch_date as UTC with milliseconds', () => {
    expect(buildStatusRecord(sampleInput()).dispatch_date).toBe('2026-11-20T10:30:00.000Z');
  });

  it('carries the prediction and the ui suggestion unchanged', () => {
    const input = sampleInput();
    const record = buildStatusRecord(input);
    expect(record.prediction).toEqual({ delivery_window: input.prediction.window, confidence_level: input.prediction.confidence });
    expect(record.ui_suggestion).toEqual(input.suggestion);
    expect(record.destination).toEqual(destination);
  });

  it('leaves out extra properties the inputs happen to carry', () => {
    const input = sampleInput();
    const padded = {
      ...input,
      destination: { ...input.destination, city: 'Paris' },
      prediction: { ...input.prediction, historyCount: 0 },
      suggestion: { ...input.suggestion, debug: true },
    } as StatusRecordInput;
    const record = buildStatusRecord(padded);
    expect(() => statusRecord.parse(record)).not.toThrow();
    expect(JSON.stringify(record)).toBe(JSON.stringify(buildStatusRecord(input)));
  });
});
