// The dashboard's test event (domain/sample-event.ts): a status record of the contract's exact shape,
// whose dispatch id no issuer can ever register, and which says in its own fields that it is a test.
import { describe, expect, it } from '@jest/globals';
import { parse } from '../../consumer-kit/src/index.js';
import { sampleStatusRecord, TEST_EVENT_DISPATCH_ID } from '../../domain/sample-event.js';
import { registrationBody, statusRecord } from '../../domain/dispatch-schemas.js';
import { UUID_V4 } from '../../domain/field-schemas.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/vocabulary.js';
import { buildWebhookBody } from '../../domain/webhook-payload.js';

const now = new Date('2026-11-24T10:00:00.000Z');

describe('the test event dispatch id', () => {
  it('is not a UUID v4, so POST /v1/dispatches refuses it as an id and no real dispatch can share it', () => {
    expect(UUID_V4.test(TEST_EVENT_DISPATCH_ID)).toBe(false);
    const registered = registrationBody.safeParse({
      id: TEST_EVENT_DISPATCH_ID,
      destination: { postal_code: '75011', country_code: 'FR' },
    });
    expect(registered.success).toBe(false);
    expect(registered.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['id']);
  });

  it('is the nil UUID (RFC 9562), a version no dispatch id has', () => {
    expect(TEST_EVENT_DISPATCH_ID).toBe('00000000-0000-0000-0000-000000000000');
  });
});

// A card's events (webhook_endpoint.disabled's test event carries a sample endpoint: test/db/webhook-endpoint-health.test.ts).
const CARD_EVENT_TYPES = WEBHOOK_EVENT_TYPES.filter(
  (type): type is Exclude<typeof type, 'webhook_endpoint.disabled'> => type !== 'webhook_endpoint.disabled',
);
describe.each(CARD_EVENT_TYPES)('a %s test event', (type) => {
  const record = sampleStatusRecord(type, now);

  it('has the exact shape of a status record, inside the same envelope as a real event', () => {
    expect(statusRecord.parse(record)).toEqual(record);
    const envelope = parse(Buffer.from(buildWebhookBody({ type, timestamp: now.toISOString(), data: record })));
    expect(Object.keys(envelope).sort()).toEqual(['data', 'event', 'timestamp']);
    expect(envelope.data.id).toBe(TEST_EVENT_DISPATCH_ID);
  });

  it('says in its fields that it is a test: postal code TEST and a message naming the test id', () => {
    expect(record.destination.postal_code).toBe('TEST');
    expect(record.ui_suggestion.recommended_message).toMatch(/^Test event \(/);
    // Sent by the dashboard and by POST /v1/webhook_endpoints/{id}/test alike: it names neither.
    expect(record.ui_suggestion.recommended_message).not.toMatch(/dashboard/);
    expect(record.ui_suggestion.recommended_message).toContain(TEST_EVENT_DISPATCH_ID);
    expect(record.ui_suggestion.recommended_message).toMatch(/no card is involved/);
  });
});
