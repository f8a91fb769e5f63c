// How a body the schemas refuse is worded (api/errors.ts parseOrBadRequest, domain/field-errors.ts):
// every kind of zod issue comes out in the service's `field: what is wrong` form, naming the field's
// dotted path, never in zod's own words ("Invalid input", "Unrecognized key", "Too big: …"). The
// same through the API, for every single-field corruption of the main bodies:
// test/api/field-errors.test.ts.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ApiError, parseOrBadRequest } from '../../api/errors.js';
import { CARRIER_EVENT_VARIANTS } from '../../domain/carrier-event-schemas.js';
import { registrationBody } from '../../domain/dispatch-schemas.js';
import { feedCreateBody, feedUpdateBody } from '../../domain/tracking-feed-schemas.js';
import { trackingPageBrandingPatch } from '../../domain/tracking-links.js';
import { endpointCreateBody } from '../../domain/webhook-endpoint-schemas.js';
import { replayRangeBody } from '../../domain/webhook-event-schemas.js';

/** The 400's message for `value`, or a failure when the schema takes it. */
function refusal(schema: z.ZodType, value: unknown, prefix?: string): string {
  try {
    parseOrBadRequest(schema, value, prefix);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).message;
  }
  throw new Error(`accepted: ${JSON.stringify(value)}`);
}

const ZOD_WORDING =
  /Invalid input|Invalid option|Invalid string|Invalid discriminator|Unrecognized key|Too big|Too small|expected .*, received/;

const registration = { destination: { postal_code: '75011', country_code: 'FR' } };
const endpoint = { url: 'https://hooks.example.com/cards', events: ['status.updated'] };
const event = { status: 'in_transit', occurred_at: '2026-11-20T10:30:00Z' };

describe('zod issues in the service wording', () => {
  it.each<[string, z.ZodType, unknown, string]>([
    ['an unknown key (unrecognized_keys)', registrationBody, { ...registration, foo: 1 }, 'foo: is not a known field'],
    [
      'an unknown nested key',
      registrationBody,
      { destination: { ...registration.destination, zip: '1' } },
      'destination.zip: is not a known field',
    ],
    ['a missing required string (invalid_type, undefined)', feedCreateBody, { provider: 'ship24' }, 'secret: is required'],
    ['a missing required object', registrationBody, {}, 'destination: is required'],
    [
      'a missing required enum (invalid_value, undefined)',
      CARRIER_EVENT_VARIANTS.service,
      { occurred_at: event.occurred_at },
      'status: is required',
    ],
    ['a missing discriminator', feedCreateBody, {}, 'provider: is required'],
    ['an unknown discriminator', feedCreateBody, { provider: 'fedex' }, 'provider: must be one of easypost, aftership, ship24, shippo'],
    [
      'a wrong type (invalid_type)',
      registrationBody,
      { destination: { postal_code: 75011, country_code: 'FR' } },
      'destination.postal_code: must be a string, not a number',
    ],
    ['null where a value is required', registrationBody, { destination: null }, 'destination: must be an object, not null'],
    ['a number too big (too_big)', endpointCreateBody, { ...endpoint, rate_limit: 1001 }, 'rate_limit: must be at most 1000'],
    ['a number too small (too_small)', endpointCreateBody, { ...endpoint, rate_limit: 0 }, 'rate_limit: must be at least 1'],
    ['a number that is not whole', endpointCreateBody, { ...endpoint, rate_limit: 1.5 }, 'rate_limit: must be a whole number'],
    ['an array too short', endpointCreateBody, { ...endpoint, events: [] }, 'events: must have at least 1 item'],
    [
      'an array item of an enum (invalid_value)',
      endpointCreateBody,
      { ...endpoint, events: ['card.lost'] },
      'events.0: must be one of status.updated, delivery.predicted',
    ],
    [
      'an enum value (invalid_value)',
      CARRIER_EVENT_VARIANTS.service,
      { ...event, status: 'lost' },
      'status: must be one of dispatched, in_transit, out_for_delivery, delivered, exception',
    ],
    ['a body that is not an object', registrationBody, [], 'body: must be an object, not an array'],
  ])('words %s with its field path', (_, schema, value, expected) => {
    const message = refusal(schema, value);
    expect(message).toContain(expected);
    expect(message).not.toMatch(ZOD_WORDING);
  });

  it.each<[string, z.ZodType, unknown, string]>([
    ['a string format (invalid_format)', z.object({ link: z.url() }), { link: 'not a url' }, 'link: must be a URL'],
    [
      'a regex without its own message',
      z.object({ code: z.string().regex(/^[a-z]+$/) }),
      { code: 'A1' },
      'code: must match the pattern ^[a-z]+$',
    ],
    ['a string too long (too_big)', z.object({ name: z.string().max(3) }), { name: 'abcd' }, 'name: must be at most 3 characters long'],
    ['a string too short (too_small)', z.object({ name: z.string().min(2) }), { name: 'a' }, 'name: must be at least 2 characters long'],
    ['a number not below a bound', z.object({ n: z.number().lt(5) }), { n: 5 }, 'n: must be less than 5'],
    ['a multiple (not_multiple_of)', z.object({ n: z.number().multipleOf(5) }), { n: 7 }, 'n: must be a multiple of 5'],
    ['a literal', z.object({ v: z.literal('x') }), { v: 'y' }, 'v: must be "x"'],
    ['a refinement without a message (custom)', z.object({ a: z.string().refine(() => false) }), { a: 'x' }, 'a: is not valid'],
    ['a boolean', z.object({ on: z.boolean() }), { on: 'yes' }, 'on: must be true or false, not a string'],
    ['a record key', z.object({ h: z.record(z.string().regex(/^[a-z]+$/, 'a name is lower-case letters'), z.string()) }), { h: { AB: 'x' } }, 'h.AB: is not a valid key (a name is lower-case letters)'], // prettier-ignore
    [
      'a union with no matching member',
      z.object({ u: z.union([z.string(), z.number()]) }),
      { u: true },
      'u: must be a string, not a boolean',
    ],
  ])('words %s with its field path', (_, schema, value, expected) => {
    const message = refusal(schema, value);
    expect(message).toContain(expected);
    expect(message).not.toMatch(ZOD_WORDING);
  });

  it('keeps a message the schema states itself', () => {
    expect(refusal(registrationBody, { destination: { postal_code: '75011', country_code: 'XX' } })).toBe(
      'destination.country_code: must be an assigned ISO 3166-1 alpha-2 country code',
    );
  });

  it('points a country code ISO 3166-1 replaced or never assigned to the one it means (UK → GB)', () => {
    const refused = (code: string) => refusal(registrationBody, { destination: { postal_code: '75011', country_code: code } });
    expect(refused('uk')).toBe(
      'destination.country_code: must be an assigned ISO 3166-1 alpha-2 country code; for United Kingdom write GB',
    );
    expect(refused('EL')).toBe('destination.country_code: must be an assigned ISO 3166-1 alpha-2 country code; for Greece write GR');
  });

  // Half of a surrogate pair alone: JSON can escape one (`"\ud83c"`), Postgres can keep none (domain/field-schemas.ts wellFormedString).
  it.each<[string, z.ZodType, unknown]>([
    ['reference', registrationBody, { ...registration, reference: 'a\ud83c' }],
    ['destination.postal_code', registrationBody, { destination: { postal_code: '75\udc00', country_code: 'FR' } }],
    ['event_id', CARRIER_EVENT_VARIANTS.service, { ...event, event_id: 'x\ud83c' }],
    ['location', CARRIER_EVENT_VARIANTS.easypost, { vocabulary: 'easypost', ...event, location: '\udfffParis' }],
    ['url', endpointCreateBody, { ...endpoint, url: 'https://hooks.example.com/\ud83c' }],
    ['description', endpointCreateBody, { ...endpoint, description: 'cards \ud83c' }],
    ['description', feedCreateBody, { provider: 'shippo', description: 'feed \ud83c' }],
    ['secret', feedUpdateBody, { secret: 'whsec-0123\ud83c' }],
    ['display_name', trackingPageBrandingPatch, { display_name: 'Bank \ud83c' }],
    ['support_url', trackingPageBrandingPatch, { support_url: 'https://bank.example/help\ud83c' }],
  ])('refuses an unpaired surrogate in %s', (field, schema, value) => {
    expect(refusal(schema, value)).toBe(`${field}: must not contain unpaired surrogates (U+D800–U+DFFF alone)`);
  });

  it('takes a surrogate pair (a character outside the Basic Multilingual Plane) where it refuses half of one', () => {
    expect(registrationBody.safeParse({ ...registration, reference: 'a\ud83c\udf89' }).success).toBe(true);
  });

  it('names the prefix of a path parameter', () => {
    expect(refusal(z.string().regex(/^fd_/, 'must be a tracking feed id'), 'x', 'feed_id')).toBe('feed_id: must be a tracking feed id');
  });

  it('names every failing field of a union member that comes closest', () => {
    expect(refusal(replayRangeBody, { since: 5 })).toBe('since: must be a string, not a number; until: is required');
  });

  it('names each unknown key of a body on its own', () => {
    expect(refusal(registrationBody, { ...registration, foo: 1, bar: 2 })).toMatch(
      /^foo: is not a known field.*; bar: is not a known field/,
    );
  });

  it('lists the known fields with an unknown one', () => {
    expect(refusal(endpointCreateBody, { ...endpoint, secret: 'x' })).toBe(
      'secret: is not a known field (known: url, events, description, headers, rate_limit)',
    );
  });

  it('says at most 10 problems, then how many more', () => {
    const message = refusal(endpointCreateBody, { ...endpoint, events: Array.from({ length: 15 }, () => 'nope') });
    expect(message.split('; ')).toHaveLength(11);
    expect(message).toMatch(/; and \d+ more problems$/);
  });
});
