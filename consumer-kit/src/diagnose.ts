// Explains why a webhook did not verify, for the engineer wiring up an endpoint. Give it what the
// handler had — the body it verified, the request headers and the configured secret(s) — and
// optionally the signature the handler computed itself; it names the usual mistakes:
// a re-serialised body, a wrong secret (or the previous one during a rotation), a wrong encoding
// (base64 instead of hex, uppercase, a `sha256=` prefix), stray whitespace, a missing header.
import { serialiseEnvelope, webhookEnvelope } from '../../domain/webhook-payload.js';
import { header, rawBytes, type HeaderSource } from './headers.js';
import { hexSignature, verify, verifyStandard, type RawBody, type Secrets } from './verify.js';

export type ProblemCode =
  | 'body_not_raw'
  | 'body_reserialised'
  | 'header_missing'
  | 'wrong_encoding'
  | 'header_whitespace'
  | 'secret_whitespace'
  | 'secret_missing_prefix'
  | 'previous_secret'
  | 'wrong_secret'
  | 'timestamp_out_of_tolerance';

export interface Diagnosis {
  ok: boolean;
  problems: Array<{ code: ProblemCode; message: string }>;
  /** The X-Service-Signature this body and the first secret produce, to compare with your own. */
  expectedSignature?: string;
}

export function diagnose(
  rawBody: RawBody | object,
  headers: HeaderSource,
  secrets: Secrets,
  options: { computed?: string; now?: Date } = {},
): Diagnosis {
  const problems: Diagnosis['problems'] = [];
  const list = typeof secrets === 'string' ? [secrets] : [...secrets];
  let body: Buffer;
  try {
    body = rawBytes(rawBody as RawBody);
  } catch {
    return {
      ok: false,
      problems: [
        { code: 'body_not_raw', message: 'the body is a parsed object: sign-check the raw request bytes, read before any JSON parsing' },
      ],
    };
  }
  const expected = hexSignature(body, list[0]);
  const received = header(headers, 'x-service-signature');
  const standard =
    header(headers, 'webhook-signature') !== undefined ? verifyStandard(body, headers, list, { now: options.now }) : undefined;

  for (const secret of list) {
    if (secret !== secret.trim()) problems.push({ code: 'secret_whitespace', message: 'the secret has leading or trailing whitespace (a newline from an env file?): trim it' }); // prettier-ignore
    else if (!secret.startsWith('whsec_') && received !== undefined && verify(body, received.trim(), `whsec_${secret}`))
      problems.push({ code: 'secret_missing_prefix', message: 'the secret is missing its "whsec_" prefix: the HMAC key is the whole string, prefix included' }); // prettier-ignore
  }
  if (options.computed !== undefined) encodingProblems(options.computed, expected, 'your computed signature', problems);

  if (received === undefined) {
    problems.push({ code: 'header_missing', message: 'no X-Service-Signature header: is a proxy stripping it, or are you reading another header name?' }); // prettier-ignore
    return { ok: false, problems, expectedSignature: expected };
  }
  if (verify(body, received, list) && (standard === undefined || standard.ok)) return { ok: problems.length === 0, problems, expectedSignature: expected }; // prettier-ignore
  if (received !== received.trim()) problems.push({ code: 'header_whitespace', message: 'the X-Service-Signature value has surrounding whitespace: trim it before comparing' }); // prettier-ignore
  encodingProblems(received.trim(), expected, 'the X-Service-Signature header', problems);

  if (standard?.ok === false && standard.reason === 'timestamp_out_of_tolerance')
    problems.push({ code: 'timestamp_out_of_tolerance', message: "webhook-timestamp is more than 5 minutes from this machine's clock: check the clock (NTP), or a replayed request" }); // prettier-ignore
  // A mistake already named explains the mismatch; only otherwise look for a deeper cause.
  if (verify(body, received.trim(), list) || problems.length > 0) return { ok: false, problems, expectedSignature: expected };

  if (standard?.ok) {
    problems.push({ code: 'previous_secret', message: 'the body and secret are right (webhook-signature verifies) but X-Service-Signature is still signed with the previous secret: a rotation is in progress until its switch time; verify with [newSecret, previousSecret]' }); // prettier-ignore
  } else if (isReserialised(body)) {
    problems.push({ code: 'body_reserialised', message: 'the body is not byte-for-byte what the service sends (compact JSON, fields in order): it was re-serialised; verify the raw request bytes' }); // prettier-ignore
  } else {
    problems.push({ code: 'wrong_secret', message: "the signature does not match this body with this secret: use the endpoint's secret (shown once by `webhook add` / `webhook rotate-secret`)" }); // prettier-ignore
  }
  return { ok: false, problems, expectedSignature: expected };
}

function encodingProblems(value: string, expectedHex: string, what: string, problems: Diagnosis['problems']): void {
  const digest = Buffer.from(expectedHex, 'hex');
  if (value === expectedHex) return;
  const hint = (how: string) =>
    problems.push({ code: 'wrong_encoding', message: `${what} is ${how}; the signature is lowercase hex (digest('hex'))` });
  if (value.toLowerCase() === expectedHex) hint('uppercase hex');
  else if (value === digest.toString('base64') || value === digest.toString('base64url')) hint('base64');
  else if (/^(sha256=|v1,)/i.test(value) && value.replace(/^(sha256=|v1,)/i, '') === expectedHex) hint('prefixed ("sha256=" or "v1,")');
}

/** True when the body parses as an envelope but is not in the exact form the service builds. */
function isReserialised(body: Buffer): boolean {
  try {
    const parsed = webhookEnvelope.safeParse(JSON.parse(body.toString('utf8')));
    if (!parsed.success) return false;
    return serialiseEnvelope(parsed.data) !== body.toString('utf8');
  } catch {
    return false;
  }
}
