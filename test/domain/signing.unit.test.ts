// Webhook signing (docs/webhooks.md "Signing"): the hex `X-Service-Signature`, the
// Standard Webhooks headers checked with the `standardwebhooks` package as a real consumer would,
// and the rotation overlap.
import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { generateSecret, signedHeaders, signHex, standardSignature } from '../../domain/signing.js';

const body = '{"event":"status.updated","timestamp":"2026-11-20T09:30:00.000Z","data":{"id":"x"}}';
const now = new Date('2026-11-20T09:30:05.000Z');

describe('generateSecret', () => {
  it('is whsec_ followed by 32 random bytes in standard base64', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateSecret()).not.toBe(secret);
  });
});

describe('signHex', () => {
  it('is the lowercase hex HMAC-SHA256 of the body keyed with the UTF-8 bytes of the whole secret string', () => {
    const secret = generateSecret();
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
    expect(signHex(body, secret)).toBe(expected);
    expect(signHex(Buffer.from(body), secret)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('standardSignature', () => {
  it('equals what the standardwebhooks package signs', () => {
    const secret = generateSecret();
    expect(standardSignature('evt_1', 1_790_000_000, body, secret)).toBe(
      new Webhook(secret).sign('evt_1', new Date(1_790_000_000_000), body),
    );
  });
});

describe('signedHeaders', () => {
  it('carries every header of the contract, with the attempt number and the event id', () => {
    const secret = generateSecret();
    const headers = signedHeaders({ eventId: 'evt_abc', attempt: 3, body, secrets: { current: secret }, now });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'X-Service-Signature': signHex(body, secret),
      'X-Service-Event-Id': 'evt_abc',
      'X-Service-Delivery-Attempt': '3',
      'webhook-id': 'evt_abc',
      'webhook-timestamp': String(now.getTime() / 1000),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
    });
  });

  it('passes verification by the standardwebhooks package', () => {
    const secret = generateSecret();
    const headers = signedHeaders({ eventId: 'evt_abc', attempt: 1, body, secrets: { current: secret }, now: new Date() });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('during a rotation overlap, webhook-signature verifies with either secret', () => {
    const [previous, current] = [generateSecret(), generateSecret()];
    const switchAt = new Date(Date.now() + 3_600_000);
    const headers = signedHeaders({ eventId: 'evt_r', attempt: 1, body, secrets: { current, previous, switchAt }, now: new Date() });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
  });

  it('X-Service-Signature uses the previous secret before switchAt and the new one from switchAt on', () => {
    const [previous, current] = [generateSecret(), generateSecret()];
    const switchAt = new Date('2026-11-20T10:00:00.000Z');
    const at = (iso: string) =>
      signedHeaders({ eventId: 'e', attempt: 1, body, secrets: { current, previous, switchAt }, now: new Date(iso) })[
        'X-Service-Signature'
      ];
    expect(at('2026-11-20T09:59:59.999Z')).toBe(signHex(body, previous));
    expect(at('2026-11-20T10:00:00.000Z')).toBe(signHex(body, current));
  });

  it('without a previous secret, signs with the current one only', () => {
    const current = generateSecret();
    const headers = signedHeaders({ eventId: 'e', attempt: 1, body, secrets: { current }, now });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(headers['X-Service-Signature']).toBe(signHex(body, current));
  });
});
