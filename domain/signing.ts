// Webhook secrets and signatures, pure (node:crypto only). Two signatures go on every request:
// - `X-Service-Signature`: lowercase hex HMAC-SHA256 of the exact body bytes, keyed with
//   the endpoint secret string's UTF-8 bytes (docs/webhooks.md "Signing");
// - Standard Webhooks' `webhook-id`/`webhook-timestamp`/`webhook-signature`: `v1,<base64>` HMAC over
//   `id.timestamp.body`, keyed with the base64-decoded part after `whsec_`, so consumers can use the
//   libraries they already have and reject replays by timestamp.
// Rotation: during an overlap `webhook-signature` carries a signature per secret (the format allows a
// space-separated list), while `X-Service-Signature` — one value only — switches from the previous
// secret to the new one at a time the consumer chose (`switchAt`).
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + 32 random bytes in standard base64. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** `X-Service-Signature`: lowercase hex HMAC-SHA256 of the body, keyed with the secret's UTF-8 bytes. */
export function signHex(body: Buffer | string, secret: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/** The Standard Webhooks key: the base64-decoded part after `whsec_`. */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One Standard Webhooks signature, `v1,<base64>`, over `${id}.${timestampSeconds}.${body}`. */
export function standardSignature(id: string, timestampSeconds: number, body: Buffer | string, secret: string): string {
  const mac = createHmac('sha256', standardKey(secret)).update(`${id}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

export interface EndpointSecrets {
  current: string;
  /** The secret before the last rotation, while its overlap lasts (the caller drops it once expired). */
  previous?: string;
  /** Until this instant `X-Service-Signature` uses `previous`; from it on, `current`. */
  switchAt?: Date;
}

export interface SignedHeadersInput {
  eventId: string;
  attempt: number;
  body: Buffer | string;
  secrets: EndpointSecrets;
  /** The attempt's time: `webhook-timestamp` is when the request is sent, not when the event was created. */
  now: Date;
}

/** Every header a webhook request carries. */
export function signedHeaders(input: SignedHeadersInput): Record<string, string> {
  const { current, previous, switchAt } = input.secrets;
  const specSecret = previous !== undefined && switchAt !== undefined && input.now.getTime() < switchAt.getTime() ? previous : current;
  const timestamp = Math.floor(input.now.getTime() / 1000);
  const signatures = [current, ...(previous !== undefined ? [previous] : [])].map((secret) =>
    standardSignature(input.eventId, timestamp, input.body, secret),
  );
  return {
    'Content-Type': 'application/json',
    'X-Service-Signature': signHex(input.body, specSecret),
    'X-Service-Event-Id': input.eventId,
    'X-Service-Delivery-Attempt': String(input.attempt),
    'webhook-id': input.eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
  };
}
