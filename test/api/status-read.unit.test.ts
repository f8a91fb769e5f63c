// The read decision of GET /v1/status/{id} that the fast path and the Koa route share
// (api/status-read.ts), on rows built as the projection activity builds them. The HTTP behaviour of
// both paths is checked end to end in test/api/status.test.ts.
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../api/errors.js';
import type { ApiKey } from '../../api/key-cache.js';
import { noneMatchNames, statusAnswer, statusBody, statusHeaders, statusIdOf, statusMaxAge, statusReader } from '../../api/status-read.js';
import type { DispatchRow } from '../../db/dispatches.js';
import { renderSuggestion } from '../../domain/messages.js';
import { predict } from '../../domain/prediction.js';
import { initialState } from '../../domain/state-machine.js';
import { buildStatusRecord } from '../../domain/status-record.js';

const ID = '6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60';
const DISPATCHED_AT = '2026-11-20T10:30:00.000Z';
const destination = { postal_code: '75011', country_code: 'FR' };
const key: ApiKey = { id: 'key_1', issuerId: 'iss_1', mode: 'live', scopes: ['status:read'] };

function row(): DispatchRow {
  const prediction = predict({ dispatchDate: DISPATCHED_AT, destination, state: initialState(DISPATCHED_AT), today: '2026-11-20' });
  const suggestion = renderSuggestion({
    status: 'dispatched',
    window: prediction.window,
    confidence: prediction.confidence,
    registeredLocale: 'en-GB',
    countryCode: 'FR',
  });
  const record = buildStatusRecord({ id: ID, status: 'dispatched', dispatchDate: DISPATCHED_AT, destination, prediction, suggestion });
  return {
    id: ID,
    issuerId: key.issuerId,
    mode: 'live',
    status: 'dispatched',
    dispatchDate: new Date(DISPATCHED_AT),
    windowMin: prediction.window.min,
    windowMax: prediction.window.max,
    confidenceLevel: prediction.confidence,
    exceptionReason: null,
    countryCode: 'FR',
    locale: 'en-GB',
    registration: {},
    recordJson: JSON.stringify(record),
    version: '3',
  };
}

function refusal(read: () => unknown): ApiError {
  try {
    read();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('the read was not refused');
}

describe('status read decision', () => {
  it('lets a key read status only with the status:read scope', () => {
    expect(statusReader(key)).toBe(key);
    expect(statusReader({ ...key, scopes: ['dispatches:write'] })).toBeUndefined();
    expect(statusReader(undefined)).toBeUndefined();
  });

  it('takes a UUID v4 in any case as its lower-case id, and no other UUID version', () => {
    expect(statusIdOf(ID.toUpperCase())).toBe(ID);
    expect(statusIdOf('c232ab00-9414-11ec-b3c8-9f6bdeced846')).toBeUndefined();
  });

  it('sends the stored JSON text as it is for a plain read', () => {
    const found = row();
    expect(statusBody(key, ID, found, undefined)).toBe(found.recordJson);
  });

  it('re-renders only ui_suggestion for ?locale=', () => {
    const found = row();
    const french = JSON.parse(statusBody(key, ID, found, 'fr-FR'));
    const stored = JSON.parse(found.recordJson);
    expect(french.ui_suggestion.locale).toMatch(/^fr\b/);
    expect({ ...french, ui_suggestion: undefined }).toEqual({ ...stored, ui_suggestion: undefined });
  });

  it('refuses an unknown dispatch and one of the other mode with 404, another issuer’s with 403', () => {
    expect(refusal(() => statusBody(key, ID, undefined, undefined)).status).toBe(404);
    expect(refusal(() => statusBody({ ...key, mode: 'test' }, ID, row(), undefined)).status).toBe(404);
    expect(refusal(() => statusBody({ ...key, issuerId: 'iss_2' }, ID, row(), undefined)).status).toBe(403);
  });

  it('answers JSON with the body’s length in bytes, not characters', () => {
    const body = JSON.stringify({ message: 'Livré à Besançon' });
    const headers = statusHeaders({}, { tag: 'W/"1-default"', body }, 3_600_000);
    expect(headers['Content-Type']).toBe('application/json; charset=utf-8');
    expect(headers['Content-Length']).toBe(Buffer.byteLength(body, 'utf8'));
    expect(headers['Content-Length']).toBeGreaterThan(body.length);
  });

  it('tags the answer weakly with the projection version and the locale', () => {
    expect(statusAnswer(key, ID, row(), undefined).tag).toBe('W/"3-default"');
    expect(statusAnswer(key, ID, row(), 'fr-FR').tag).toBe('W/"3-fr-FR"');
    expect(statusAnswer(key, ID, { ...row(), version: '4' }, undefined).tag).toBe('W/"4-default"');
  });

  it('answers without a body when If-None-Match names the tag, weakly compared, in a list, or as *', () => {
    for (const header of ['W/"3-default"', '"3-default"', '"x", W/"3-default" , "y"', '*', ' * ']) {
      expect([header, statusAnswer(key, ID, row(), undefined, header).body]).toEqual([header, undefined]);
    }
    for (const header of ['W/"2-default"', 'W/"3-fr-FR"', '3-default', '"3-default', '']) {
      expect([header, statusAnswer(key, ID, row(), undefined, header).body]).toEqual([header, row().recordJson]);
    }
    expect(noneMatchNames('W/"3-default"', 'W/"3-default"')).toBe(true);
  });

  it('checks access before the tag: another issuer’s key gets 403 even with the matching tag', () => {
    expect(refusal(() => statusAnswer({ ...key, issuerId: 'iss_2' }, ID, row(), undefined, '*')).status).toBe(403);
  });

  it('lets a poller cache until the next epoch-aligned refresh run, never more than an hour nor less than a second', () => {
    const hour = 3_600_000;
    expect(statusMaxAge(hour, Date.UTC(2026, 10, 24, 10, 45, 0))).toBe(900);
    expect(statusMaxAge(hour, Date.UTC(2026, 10, 24, 10, 0, 0))).toBe(3600);
    expect(statusMaxAge(hour, Date.UTC(2026, 10, 24, 10, 59, 59, 999))).toBe(1);
    expect(statusMaxAge(6 * hour, Date.UTC(2026, 10, 24, 1, 0, 0))).toBe(3600);
    expect(statusMaxAge(2_000, 1_000)).toBe(1);
  });

  it('sends ETag and Cache-Control on a 304, without a body type or length', () => {
    const headers = statusHeaders({}, { tag: 'W/"3-default"' }, 3_600_000);
    expect(headers['ETag']).toBe('W/"3-default"');
    expect(headers['Cache-Control']).toMatch(/^private, max-age=\d+$/);
    expect(headers['Content-Type']).toBeUndefined();
    expect(headers['Content-Length']).toBeUndefined();
  });
});
