// The wire contract of tracking links and of an issuer's tracking-page branding (docs/tracking-page.md "Links",
// docs/tracking-page.md "Tracking links and the tracking page"): the zod schemas that
// api/routes/tracking-links.ts validates with and api/openapi-tracking.ts documents, the link's
// token (a credential: 256 random bits, kept only as its SHA-256) and the rules zod cannot say alone
// (the expiry's bounds, the accent colour's contrast with white text).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { isoTimestamp, localeTag, plainText, wellFormedString } from './field-schemas.js';

// ---------- the token ----------

/** 32 random bytes in unpadded base64url: 43 characters. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newTrackingToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: trackingTokenHash(token) };
}

export function trackingTokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Whether `stored` is the hash of `token`, compared in constant time. */
export function tokenMatches(stored: Buffer, token: string): boolean {
  const computed = trackingTokenHash(token);
  return stored.length === computed.length && timingSafeEqual(stored, computed);
}

// ---------- links ----------

export const DEFAULT_LINK_LIFETIME_DAYS = 60;
export const MAX_LINK_LIFETIME_DAYS = 180;
const DAY_MS = 86_400_000;

export const trackingLinkId = z
  .string()
  .regex(/^tl_[0-9A-Za-z]{16}$/, 'must be a tracking link id (tl_ and 16 letters or digits)')
  .meta({ description: 'tracking link id', example: 'tl_4kR9wQ2mZp7TxA1c' });

export const EXPIRES_AT_RULE = `must be in the future and at most ${MAX_LINK_LIFETIME_DAYS} days ahead`;

export const trackingLinkCreateBody = z
  .object({
    expires_at: isoTimestamp.optional().meta({
      description: `when the link stops working (default ${DEFAULT_LINK_LIFETIME_DAYS} days from now); ${EXPIRES_AT_RULE}`,
    }),
    locale: localeTag.optional().meta({ description: "the page's language unless the visitor picks another (default: the dispatch's locale)" }), // prettier-ignore
    require_postal_code: z
      .boolean()
      .optional()
      .meta({ description: 'the page asks for the destination postal code first (default false)' }),
  })
  .strict()
  .meta({ id: 'TrackingLinkCreate' });
export type TrackingLinkCreateBody = z.infer<typeof trackingLinkCreateBody>;

/** The expiry a link gets: the body's, checked against `now`, or the default; a message naming the field when out of bounds. */
export function linkExpiry(expiresAt: string | undefined, now: Date): { expiresAt: Date } | { problem: string } {
  if (expiresAt === undefined) return { expiresAt: new Date(now.getTime() + DEFAULT_LINK_LIFETIME_DAYS * DAY_MS) };
  const at = new Date(expiresAt);
  if (at.getTime() <= now.getTime() || at.getTime() > now.getTime() + MAX_LINK_LIFETIME_DAYS * DAY_MS)
    return { problem: `expires_at: ${EXPIRES_AT_RULE}` };
  return { expiresAt: at };
}

const linkFields = {
  id: trackingLinkId,
  expires_at: isoTimestamp,
  locale: z.string().nullable().meta({ description: 'BCP 47 tag the page opens in, or null (the visitor’s browser decides)' }),
  require_postal_code: z.boolean(),
  created_at: isoTimestamp,
};

export const trackingLinkCreated = z
  .object({
    ...linkFields,
    url: z
      .string()
      .meta({ description: 'the link to give the cardholder: shown only in this answer', example: 'https://track.example.com/t/…' }),
  })
  .meta({ id: 'TrackingLinkCreated' });

export const trackingLinkRecord = z.object({ ...linkFields, revoked_at: isoTimestamp.nullable() }).meta({ id: 'TrackingLink' });

export const trackingLinkList = z
  .object({ data: z.array(trackingLinkRecord), next_cursor: z.string().nullable() })
  .meta({ id: 'TrackingLinkList' });

export const trackingLinkListQuery = z
  .object({
    limit: z
      .string()
      .regex(/^[0-9]{1,3}$/, 'must be an integer from 1 to 100')
      .transform(Number)
      .pipe(z.number().min(1).max(100))
      .optional()
      .meta({ description: 'page size, 1–100 (default 20)', override: { type: 'integer', minimum: 1, maximum: 100, pattern: undefined } }),
    cursor: z.string().max(200).optional().meta({ description: 'the next_cursor of the previous page' }),
  })
  .strict();

// ---------- branding ----------

/** `#rrggbb`, any letter case; stored and answered in lower case. */
const HEX_COLOR = /^#[0-9A-Fa-f]{6}$/;
/** E.164: a plus, then up to 15 digits, the first not 0. */
const E164 = /^\+[1-9][0-9]{1,14}$/;
/** WCAG 2.2 AA for normal text: the accent is the background of white text (buttons, the header band). */
export const MIN_CONTRAST_WITH_WHITE = 4.5;

/** WCAG relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const channel = (offset: number) => {
    const c = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** Contrast ratio of white text on `hex` (1 to 21). */
export function contrastWithWhite(hex: string): number {
  return 1.05 / (luminance(hex) + 0.05);
}

const httpsUrl = wellFormedString()
  .max(2000)
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an https URL')
  .meta({ format: 'uri', pattern: '^https://', maxLength: 2000 });

const brandingFields = {
  display_name: plainText(1, 80, { visible: true })
    .nullable()
    .meta({ description: "the name the page shows (default: the issuer's name)" }),
  accent_color: z
    .string()
    .regex(HEX_COLOR, 'must be a colour #rrggbb')
    .refine(
      (value) => !HEX_COLOR.test(value) || contrastWithWhite(value) >= MIN_CONTRAST_WITH_WHITE,
      `must reach a contrast of ${MIN_CONTRAST_WITH_WHITE}:1 with white text (WCAG 2.2 AA); pick a darker colour`,
    )
    .transform((value) => value.toLowerCase())
    .nullable()
    .meta({ description: `#rrggbb, the background of white text: at least ${MIN_CONTRAST_WITH_WHITE}:1 against white`, example: '#0b5cad' }), // prettier-ignore
  activation_url: httpsUrl.nullable().meta({ description: 'where the Activate button leads (https)' }),
  support_url: httpsUrl.nullable().meta({ description: 'where the Contact support button leads (https)' }),
  support_phone: z
    .string()
    .regex(E164, 'must be an E.164 phone number, e.g. +33142685300')
    .nullable()
    .meta({ description: 'E.164 number the page offers as a tel: link when there is no support_url', example: '+33142685300' }),
};

export const BRANDING_FIELDS = ['display_name', 'accent_color', 'activation_url', 'support_url', 'support_phone'] as const;

export const trackingPageBranding = z
  .object({
    display_name: z.string().nullable(),
    accent_color: z.string().nullable(),
    activation_url: z.string().nullable(),
    support_url: z.string().nullable(),
    support_phone: z.string().nullable(),
  })
  .meta({ id: 'TrackingPageBranding' });
export type TrackingPageBranding = z.infer<typeof trackingPageBranding>;

/** PATCH: the fields it is given change, null clears one. */
export const trackingPageBrandingPatch = z
  .object({
    display_name: brandingFields.display_name.optional(),
    accent_color: brandingFields.accent_color.optional(),
    activation_url: brandingFields.activation_url.optional(),
    support_url: brandingFields.support_url.optional(),
    support_phone: brandingFields.support_phone.optional(),
  })
  .strict()
  .meta({ id: 'TrackingPageBrandingPatch' });
export type TrackingPageBrandingPatch = z.infer<typeof trackingPageBrandingPatch>;
