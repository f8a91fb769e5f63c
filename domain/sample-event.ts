// The synthetic event the dashboard's "Send test event" delivers: a status record of the contract's
// exact shape in the same envelope (so a consumer's parser and signature check run as for a real
// event), marked as a test where a person or a log would look: the nil UUID as the dispatch id,
// postal code `TEST`, and a message that says so. It concerns no card.
import type { StatusRecord } from './dispatch-schemas.js';
import type { WebhookEventType } from './vocabulary.js';

/**
 * The dispatch id of every test event: the nil UUID (RFC 9562). It is a UUID, so a consumer's parser
 * takes it, but not a v4 one, and POST /v1/dispatches accepts only v4 ids: no issuer can register a
 * dispatch with it, so a test event can never be taken for news of a real card.
 */
export const TEST_EVENT_DISPATCH_ID = '00000000-0000-0000-0000-000000000000';

const SAMPLE: Record<
  Exclude<WebhookEventType, 'webhook_endpoint.disabled'>,
  Pick<StatusRecord, 'status'> & { action: StatusRecord['ui_suggestion']['recommended_action'] }
> = {
  'status.updated': { status: 'in_transit', action: 'None' },
  'delivery.predicted': { status: 'dispatched', action: 'None' },
  'delivery.completed': { status: 'delivered', action: 'Activate' },
  'delivery.exception': { status: 'exception', action: 'ContactSupport' },
};

const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/** A sample status record for `type`, dated around `now`. */
export function sampleStatusRecord(type: Exclude<WebhookEventType, 'webhook_endpoint.disabled'>, now: Date): StatusRecord {
  const { status, action } = SAMPLE[type];
  const day = 86_400_000;
  const delivered = status === 'delivered';
  return {
    id: TEST_EVENT_DISPATCH_ID,
    status,
    dispatch_date: new Date(now.getTime() - 2 * day).toISOString(),
    destination: { postal_code: 'TEST', country_code: 'GB' },
    prediction: {
      delivery_window: {
        min: isoDay(delivered ? now : new Date(now.getTime() + day)),
        max: isoDay(new Date(now.getTime() + (delivered ? 0 : 3 * day))),
      },
      confidence_level: 'High',
    },
    ui_suggestion: {
      locale: 'en-GB',
      recommended_message: `Test event (${type}): dispatch ${TEST_EVENT_DISPATCH_ID} is the test id, no card is involved.`,
      recommended_action: action,
    },
  };
}
