// What the provider modules share: reading a header or query parameter of the raw request, comparing
// a secret in constant time, the HMAC the signing providers use, the stable event id of a checkpoint
// the provider gives no id to, and a zod failure turned into the field it names. Each provider module
// (easypost.ts, aftership.ts, shippo.ts, ship24.ts) keeps its own schema, scheme and table.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { fieldProblems } from '../field-errors.js';
import { wellFormedString } from '../field-schemas.js';
import type { CheckpointTime, FeedProvider, InboundRequest, ParseResult, ProviderCheckpoint } from './provider.js';
import { readCheckpointTime } from './times.js';

/** A header's single value (lower-case name, as Node gives it); a repeated header counts as absent. */
export function headerValue(request: InboundRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** A query parameter's single value; a repeated parameter counts as absent. */
export function queryValue(request: InboundRequest, name: string): string | undefined {
  const value = request.query[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Whether two strings are equal, in time that depends on neither: their SHA-256 digests are compared
 * (crypto.timingSafeEqual, always 32 bytes each), so not even the lengths show, as they would if
 * unequal lengths returned early: Ship24's and Shippo's compared value is the secret itself. Hashed
 * as UTF-16 code units, which tell every two strings apart (UTF-8 makes each lone surrogate U+FFFD).
 */
export function constantTimeEqual(received: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf16le').digest();
  return timingSafeEqual(digest(received), digest(expected));
}

export function hmacSha256(key: string | Buffer, body: Buffer | string): Buffer {
  return createHmac('sha256', key).update(body).digest();
}

/**
 * The event id of a checkpoint the provider gives no id to: a hash of what names it, so that the
 * same checkpoint resent in every webhook (providers resend the whole history) gets the same id,
 * and is a `duplicate` the second time.
 */
export function checkpointHash(
  provider: FeedProvider,
  trackingId: string,
  timeOriginal: string,
  status: string,
  location: string | undefined,
): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([provider, trackingId, timeOriginal, status, location ?? '']))
    .digest('hex');
  return `${provider}_${digest.slice(0, 40)}`;
}

// The characters carrier events' plain-text fields refuse (domain/field-schemas.ts plainText).
const CONTROL_CLASS = '[\\u0000-\\u001f\\u007f-\\u009f]';
const CONTROL = new RegExp(CONTROL_CLASS, 'u');
const CONTROLS = new RegExp(CONTROL_CLASS, 'gu');

/** The provider's own checkpoint id as an event id (≤ 200 characters, as carrier events take), else the hash. */
export function providerEventId(id: string | null | undefined, fallback: () => string): string {
  const trimmed = id?.trim();
  return trimmed && [...trimmed].length <= 200 && !CONTROL.test(trimmed) ? trimmed : fallback();
}

/**
 * The failure of a zod parse (with FIELD_ERRORS) as the spec's shape: the first failing field's
 * dotted path (`msg.checkpoints.3.tag`, as api/errors.ts names fields) and its problem, worded by
 * domain/field-errors.ts, under `prefix` when the schema read a part of the body.
 */
export function failure(error: z.ZodError, prefix: string[] = []): Extract<ParseResult, { ok: false }> {
  const { field, problem } = fieldProblems(error.issues, prefix)[0];
  return { ok: false, field, message: `${field}: ${problem}` };
}

/**
 * A checkpoint's time as `read` makes it (by default readCheckpointTime, in the checkpoint's country),
 * or null when it is absent, blank or text the service cannot read: the checkpoint is then ignored,
 * not refused (DESIGN §10: the provider resends it with every later webhook, so a 400 would block the
 * tracking for good). `unreadableTime` keeps unreadable text for the ignored list.
 */
export function checkpointTime(
  text: string | null | undefined,
  read: (text: string) => CheckpointTime | undefined = (value) => readCheckpointTime(value),
): Pick<ProviderCheckpoint, 'time' | 'unreadableTime'> {
  if (!text?.trim()) return { time: null };
  const time = read(text);
  return time ? { time } : { time: null, unreadableTime: [...text.replace(CONTROLS, ' ')].slice(0, 100).join('') };
}

/** A checkpoint time a provider's types may leave out (absent, null or blank: no time); the text is read by checkpointTime. */
export const optionalTimeString = wellFormedString()
  .nullish()
  .transform((value) => (value?.trim() ? value : undefined));

/**
 * The provider's own status and sub-status as kept on the carrier event and the ignored list: as sent,
 * but control characters made spaces (Postgres text cannot hold U+0000, and a write that fails would
 * refuse a body the provider resends for days) and at most 200 characters; an empty sub-status is none.
 */
export function originalStatus(
  vocabulary: FeedProvider,
  status: string,
  substatus: string | null | undefined,
): ProviderCheckpoint['original'] {
  const plain = (text: string) => [...text.replace(CONTROLS, ' ')].slice(0, 200).join('');
  return { vocabulary, status: plain(status), ...(substatus ? { substatus: plain(substatus) } : {}) };
}

/** Plain location text from its parts (city, state, country…), ≤ 200 characters, or undefined when there is none. */
export function locationText(...parts: (string | null | undefined)[]): string | undefined {
  const text = parts
    .map((part) => part?.trim())
    .filter((part): part is string => !!part)
    .join(', ')
    .replace(CONTROLS, ' ');
  return text ? [...text].slice(0, 200).join('').trim() : undefined;
}
