// The hand-off of a change's new deliveries to their first attempt in the same worker
// (activities/webhook-delivery.ts HandedDeliveries): taken once, only by the driver the write
// claimed them for, and only while fresh; anything else is claimed from the database as before.
import { describe, expect, it } from '@jest/globals';
import { HandedDeliveries } from '../../activities/handed-deliveries.js';
import type { DeliveryToSend } from '../../db/webhooks.js';

const delivery = (eventId: string, endpointId = 'whe_1') =>
  ({
    eventId,
    eventType: 'status.updated',
    body: Buffer.from('{}'),
    state: 'pending',
    attempts: 0,
    endpoint: { id: endpointId },
  }) as unknown as DeliveryToSend;

describe('HandedDeliveries', () => {
  it('hands a delivery to the first take by the driver it was claimed for, and never again', () => {
    const handed = new HandedDeliveries(() => 1000);
    handed.put('dispatch:a', delivery('evt_1'));
    expect(handed.take('evt_1', 'whe_1', 'dispatch:a')?.eventId).toBe('evt_1');
    expect(handed.take('evt_1', 'whe_1', 'dispatch:a')).toBeUndefined();
  });

  it('hands nothing to another driver (a replay that took the delivery over claims it itself)', () => {
    const handed = new HandedDeliveries(() => 1000);
    handed.put('dispatch:a', delivery('evt_1'));
    expect(handed.take('evt_1', 'whe_1', 'replay-1')).toBeUndefined();
    expect(handed.take('evt_1', 'whe_1', 'dispatch:a')).toBeUndefined();
  });

  it('hands nothing once the delivery waited 5 s or more', () => {
    let now = 0;
    const handed = new HandedDeliveries(() => now);
    handed.put('dispatch:a', delivery('evt_old'));
    now = 5_000;
    expect(handed.take('evt_old', 'whe_1', 'dispatch:a')).toBeUndefined();
    handed.put('dispatch:a', delivery('evt_2'));
    now = 9_000;
    handed.put('dispatch:a', delivery('evt_3'));
    now = 10_500;
    expect(handed.take('evt_2', 'whe_1', 'dispatch:a')).toBeUndefined();
    expect(handed.take('evt_3', 'whe_1', 'dispatch:a')?.eventId).toBe('evt_3');
  });

  it('keys by event and endpoint: one event handed to two endpoints is two deliveries', () => {
    const handed = new HandedDeliveries(() => 0);
    handed.put('dispatch:a', delivery('evt_1', 'whe_1'));
    handed.put('dispatch:a', delivery('evt_1', 'whe_2'));
    expect(handed.take('evt_1', 'whe_2', 'dispatch:a')?.endpoint.id).toBe('whe_2');
    expect(handed.take('evt_1', 'whe_1', 'dispatch:a')?.endpoint.id).toBe('whe_1');
  });
});
