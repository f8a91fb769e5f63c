// Verifying a webhook request. `verify` checks `X-Service-Signature` (lowercase hex
// HMAC-SHA256 of the raw body bytes, keyed with the secret string's UTF-8 bytes) in constant time.
// `verifyStandard` checks the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
// `webhook-signature`) and rejects a timestamp outside the tolerance, which stops replays.
// `verifyRequest` does both: `X-Service-Signature` always, the standard one when its headers are there.
// Every function accepts several secrets: during a rotation, pass [new, old].
import { createHmac, timingSafeEqual } from 'node:crypto';
import { header, rawBytes, type HeaderSource } from './headers.js';

export type RawBody = Buffer | Uint8Array | string;
export type Secrets = string | readonly string[];

/** Standard Webhooks' usual tolerance: five minutes either side of the receiver's clock. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

function secretList(secrets: Secrets): readonly string[] {
  return typeof secrets === 'string' ? [secrets] : secrets;
}

function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  // Lengths are public (a signature's length is fixed); only the content must not leak by timing.
  return left.length === right.length && timingSafeEqual(left, right);
}

export function hexSignature(rawBody: RawBody, secret: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBytes(rawBody)).digest('hex');
}

export function standardSignature(id: string, timestamp: string, rawBody: RawBody, secret: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBytes(rawBody)).digest('base64');
}

/** True when `signatureHeader` (the X-Service-Signature value) signs `rawBody` with one of the secrets. */
export function verify(rawBody: RawBody, signatureHeader: string | undefined, secrets: Secrets): boolean {
  if (!signatureHeader) return false;
  let match = false;
  // Every secret is tried (no early exit), so the time taken does not tell which one matched.
  for (const secret of secretList(secrets)) match = constantTimeEqual(hexSignature(rawBody, secret), signatureHeader) || match;
  return match;
}

export type StandardResult = { ok: true } | { ok: false; reason: 'headers_missing' | 'timestamp_out_of_tolerance' | 'signature_mismatch' };

/** Checks the Standard Webhooks headers: any `v1,` signature in the list may match any secret. */
export function verifyStandard(
  rawBody: RawBody,
  headers: HeaderSource,
  secrets: Secrets,
  options: { toleranceSeconds?: number; now?: Date } = {},
): StandardResult {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'headers_missing' };
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > tolerance)
    return { ok: false, reason: 'timestamp_out_of_tolerance' };
  const offered = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  let match = false;
  for (const secret of secretList(secrets)) {
    const expected = standardSignature(id, timestamp, rawBody, secret);
    for (const candidate of offered) match = constantTimeEqual(expected, candidate) || match;
  }
  return match ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
}

export type VerifyRequestResult =
  | { ok: true }
  | { ok: false; reason: 'signature_missing' | 'signature_mismatch' | 'timestamp_out_of_tolerance' | 'standard_signature_mismatch' };

/**
 * Verifies a whole request: `X-Service-Signature` must match; when the Standard Webhooks headers are
 * present they must match too, within the timestamp tolerance.
 */
export function verifyRequest(
  rawBody: RawBody,
  headers: HeaderSource,
  secrets: Secrets,
  options: { toleranceSeconds?: number; now?: Date } = {},
): VerifyRequestResult {
  const signature = header(headers, 'x-service-signature');
  if (!signature) return { ok: false, reason: 'signature_missing' };
  if (!verify(rawBody, signature, secrets)) return { ok: false, reason: 'signature_mismatch' };
  if (header(headers, 'webhook-signature') === undefined) return { ok: true };
  const standard = verifyStandard(rawBody, headers, secrets, options);
  if (standard.ok) return standard;
  return { ok: false, reason: standard.reason === 'timestamp_out_of_tolerance' ? standard.reason : 'standard_signature_mismatch' };
}
