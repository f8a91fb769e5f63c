// The field schemas every part of the wire contract is built from: ids, timestamps, free text,
// dates, country codes, language tags, a destination and a list's page size (docs/http-contract.md
// "Common rules"). Each says in zod what the server accepts and, in its metadata, what the OpenAPI
// document tells clients.
// The module itself, not the package's entry point, which also loads 78 languages' country names.
import countries from 'i18n-iso-countries/index.js';
import { z } from 'zod';
// Patterns here are also the OpenAPI document's (api/openapi.ts), read by generated clients and by
// validators in other languages: they use neither flags nor \d, \s or \w (whose meaning differs
// between regex engines), so every engine accepts exactly what the server accepts.

/** A UUID of version 4 (RFC 9562 variant), any letter case. */
export const UUID_V4 = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;
export const uuidV4 = z.string().regex(UUID_V4, 'must be a UUID v4');

/**
 * Zod's RFC 3339 date-time (calendar-checked dates, any number of fractional digits, Z or ±hh:mm),
 * widened to the lower-case "t" and "z" that RFC 3339 §5.6 allows: the document's pattern and the
 * server's check are this one expression.
 */
const RFC3339 = (() => {
  const upperOnly = z.iso.datetime({ offset: true })._zod.pattern!.source;
  const widened = upperOnly.replace(')T(?:', ')[Tt](?:').replace('(?:Z|', '(?:[Zz]|');
  if (widened.split('[Tt]').length !== 2 || widened.split('[Zz]').length !== 2) throw new Error('zod changed its date-time pattern');
  return new RegExp(widened);
})();

const zodDatetime = z.stringFormat('date-time', RFC3339, {
  error: (issue) => (issue.code === 'invalid_format' ? timestampMessage(String(issue.input)) : undefined),
});

const TIMESTAMP_RULE = 'must be an RFC 3339 timestamp with a time and an offset (Z or ±hh:mm), e.g. 2026-12-07T09:30:00Z';
/** Date and time of day as written, `YYYY-MM-DDThh:mm:ss` (either letter case of the T). */
const WALL_CLOCK = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})/;
/**
 * Why a string is not a timestamp, in the terms of the mistakes integrators make: a date where a
 * timestamp is expected, a local time without its offset, a `+hh:mm` offset in a query string
 * that arrived as a space (`+` means a space there unless written `%2B`), ISO 8601's basic format,
 * a space for the "T", a leap second, or a day or hour that no calendar has.
 */
export function timestampMessage(text: string): string {
  const wallClock = WALL_CLOCK.exec(text);
  if (wallClock && wallClock[6] === '60') return `${TIMESTAMP_RULE}: a leap second (:60) is not taken; write :59`;
  if (wallClock && !onTheCalendar(wallClock))
    return `${TIMESTAMP_RULE}: ${wallClock[0].toUpperCase()} is not a date and time of the calendar`;
  if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(text)) return `${TIMESTAMP_RULE}: a date alone is not a timestamp`;
  if (/^[0-9]{8}(?:[Tt][0-9]{2,6}(?:[.,][0-9]+)?(?:[Zz]|[+-][0-9]{2,4})?)?$/.test(text))
    return `${TIMESTAMP_RULE}: ISO 8601's basic format (no "-" and ":") is not taken`;
  if (/^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}/.test(text))
    return `${TIMESTAMP_RULE}: separate the date and the time with "T", not a space`;
  if (/[Tt][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.][0-9]+)?)? [0-9]{2}:[0-9]{2}$/.test(text))
    return `${TIMESTAMP_RULE}: its offset begins with a space, which is what a "+" in a query string becomes; write it as %2B`;
  if (/[Tt][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.][0-9]+)?)?$/.test(text))
    return `${TIMESTAMP_RULE}: it has no offset (add Z for UTC, or the local offset such as +05:30)`;
  return TIMESTAMP_RULE;
}

/** True when year, month, day, hour, minute and second (:60 aside) name a moment of the Gregorian calendar. */
function onTheCalendar(parts: RegExpExecArray): boolean {
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number);
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
}
/**
 * ISO 8601 (RFC 3339) timestamp with a time zone: Z or any ±hh:mm offset up to ±23:59. Callers turn
 * it into UTC (`toUtc`) before it goes anywhere else: Postgres takes no offset beyond ±15:59.
 */
export const isoTimestamp = zodDatetime.meta({ pattern: asciiDigits(zodDatetime._zod.pattern!.source) });

/** The same instant in UTC (`…Z`, milliseconds); years before 0001 or after 9999 come out in extended form. */
export const toUtc = (timestamp: string) => new Date(timestamp).toISOString();

function asciiDigits(pattern: string): string {
  return pattern.replaceAll('\\d', '[0-9]');
}

/** Refused in every string field the service keeps (wellFormedString). */
export const UNPAIRED_SURROGATE_MESSAGE = 'must not contain unpaired surrogates (U+D800–U+DFFF alone)';

/**
 * A string of well-formed UTF-16: JSON can escape half of a surrogate pair alone (`"\ud83c"`, what
 * cutting an emoji in two leaves), and Postgres can hold no such string: jsonb refuses it (a
 * registration's fingerprint failed in its projection, which refused the registration with the
 * database's words and burnt its id), text keeps U+FFFD instead (two carrier event ids became one).
 * Every string field of a body that the service keeps is built on this, the providers' bodies included.
 */
export const wellFormedString = () => z.string().refine((text) => text.isWellFormed(), UNPAIRED_SURROGATE_MESSAGE);

/** C0 controls, DEL and C1 controls: refused in every string field (Postgres cannot store NUL in text). */
const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';
const CONTROL_CHARACTER_MESSAGE = 'must not contain control characters (U+0000–U+001F, U+007F–U+009F)';
/** What String.prototype.trim() removes (ECMAScript WhiteSpace and LineTerminator), as a class body. */
const TRIMMED = '\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

const codePoints = (text: string) => [...text].length;

/**
 * Free text of `min`–`max` characters, well-formed, without control characters. The length is
 * counted in characters (code points), as JSON Schema's minLength/maxLength count them, not in
 * UTF-16 units. With `visible`, it must hold a character that trim() keeps, and it is trimmed.
 */
export function plainText(min: number, max: number, options: { visible?: boolean } = {}) {
  const pattern = options.visible
    ? `^[^\\u0000-\\u001f\\u007f-\\u009f]*[^${TRIMMED}][^\\u0000-\\u001f\\u007f-\\u009f]*$`
    : NO_CONTROL_CHARACTERS;
  const text = wellFormedString()
    .regex(new RegExp(NO_CONTROL_CHARACTERS, 'u'), CONTROL_CHARACTER_MESSAGE)
    .refine((value) => codePoints(value) >= min && codePoints(value) <= max, `must be ${min} to ${max} characters long`)
    .refine((value) => !options.visible || value.trim() !== '', 'must not be blank')
    .meta({ minLength: min, maxLength: max, pattern });
  return options.visible ? text.transform((value) => value.trim()) : text;
}
/** ISO 8601 calendar date without time, e.g. 2026-11-24. */
export const isoDate = z.iso.date();

/**
 * The assigned ISO 3166-1 alpha-2 codes: i18n-iso-countries' list, ISO's 249 and XK (Kosovo's
 * user-assigned code, which the European Commission, SWIFT and the carriers use). Not the regions
 * Intl can name: CLDR also names aliases and codes ISO reserves for no country (UK, EU, UN, EZ, QO,
 * XA, XB, FX, SU, YU, …), which were taken, stored, predicted with defaults and never listed under
 * the country meant.
 */
export const ASSIGNED_COUNTRY_CODES: readonly string[] = Object.keys(countries.getAlpha2Codes()).sort();
const assignedCountryCodes = new Set(ASSIGNED_COUNTRY_CODES);

/** Codes written for a country whose ISO code is another (the UK's is GB, Greece's GR): the refusal names it. */
const COUNTRY_CODE_MEANT: Readonly<Record<string, string>> = { UK: 'GB', EL: 'GR', FX: 'FR', TP: 'TL', ZR: 'CD', BU: 'MM', DD: 'DE' };
const ASSIGNED_COUNTRY_MESSAGE = 'must be an assigned ISO 3166-1 alpha-2 country code';
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** Any letter case: each code as `[Ff][Rr]`, so that the document states exactly what the server takes. */
const COUNTRY_CODE_PATTERN = `^(?:${ASSIGNED_COUNTRY_CODES.map((code) => [...code].map((c) => `[${c}${c.toLowerCase()}]`).join('')).join('|')})$`;

export const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
  .transform((code) => code.toUpperCase())
  .superRefine((code, ctx) => {
    if (assignedCountryCodes.has(code)) return;
    const meant = COUNTRY_CODE_MEANT[code];
    const hint = meant ? `; for ${regionNames.of(meant)} write ${meant}` : '';
    ctx.addIssue({ code: 'custom', message: ASSIGNED_COUNTRY_MESSAGE + hint });
  })
  .meta({
    pattern: COUNTRY_CODE_PATTERN,
    description: 'an assigned ISO 3166-1 alpha-2 country code, in any letter case (stored upper-cased)',
    example: 'FR',
  });

/**
 * The BCP 47 tags taken (UTS 35 Unicode locale identifiers, the syntax Intl implements): a language of
 * 2–3 or 5–8 letters, an optional script, region and variant, and an optional `-u-` extension of
 * keywords. Only what the syntax alone decides: two variants or two extensions are left out, since
 * Intl refuses a repeated one.
 */
const BCP47_PATTERN =
  '^(?:[A-Za-z]{2,3}|[A-Za-z]{5,8})(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))?' +
  '(?:-[Uu](?:-[A-Za-z0-9][A-Za-z](?:-[A-Za-z0-9]{3,8})*)+)?$';

/** BCP 47 language tag, canonicalised (e.g. `fr-ca` → `fr-CA`). */
export const localeTag = z
  .string()
  .min(2)
  .max(35)
  .regex(new RegExp(BCP47_PATTERN), 'must be a BCP 47 language tag, e.g. en-GB')
  .meta({ pattern: BCP47_PATTERN, description: 'a BCP 47 language tag, e.g. en-GB', example: 'en-GB' })
  .transform((tag, ctx) => {
    try {
      return Intl.getCanonicalLocales(tag)[0];
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a BCP 47 language tag, e.g. en-GB' });
      return z.NEVER;
    }
  });

export const destination = z
  .object({
    postal_code: plainText(1, 16, { visible: true }),
    country_code: countryCode,
  })
  .strict();

export const LIST_LIMIT_MAX = 100;
export const LIST_LIMIT_DEFAULT = 20;

/** The page size of every list's query string (`limit`), as text on the wire. */
export const listLimit = z
  .string()
  .regex(/^[0-9]{1,6}$/, 'must be a whole number')
  .transform(Number)
  .pipe(z.number().min(1).max(LIST_LIMIT_MAX))
  .optional()
  .meta({
    description: `page size, 1–${LIST_LIMIT_MAX} (default ${LIST_LIMIT_DEFAULT})`,
    // A query parameter is text on the wire; the document says what that text must be.
    override: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX, pattern: undefined },
  });

/** The `cursor` of a list's query string: the `next_cursor` of the previous page, unchanged. */
export const cursorParam = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,200}$/, 'not a cursor this API returned; pass next_cursor unchanged')
  .optional()
  .meta({ description: 'the `next_cursor` of the previous page, unchanged (opaque: only a cursor this API returned is valid)' });
