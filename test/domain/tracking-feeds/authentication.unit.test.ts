// Each provider's authentication (domain/tracking-feeds/*.ts, DESIGN §10 "Inbound"), checked on the
// raw bytes before any parsing: a request signed as the provider signs (test/fixtures/tracking-feeds/
// load.ts signFixture, written apart from the production code) is accepted; a missing, repeated,
// wrong, truncated or lengthened signature, a wrong secret and a body changed by one byte are refused,
// without throwing (the constant-time comparison compares SHA-256 digests, whatever the lengths). For
// every body and secret (fast-check), signed with the feed's secret ⇔ accepted; for any two strings,
// constantTimeEqual is string equality.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { constantTimeEqual } from '../../../domain/tracking-feeds/common.js';
import { FEED_PROVIDER_MODULES, FEED_PROVIDERS, type FeedProvider, type InboundRequest } from '../../../domain/tracking-feeds/index.js';
import { fixtureText, signFixture } from '../../fixtures/tracking-feeds/load.js';

const FIXTURE_OF: Record<FeedProvider, Parameters<typeof fixtureText>[0]> = {
  easypost: 'easypost',
  aftership: 'aftership',
  shippo: 'shippo',
  ship24: 'ship24',
};
/** Where each provider puts its proof: a header, or Shippo's `token` query parameter. */
const CARRIER: Record<FeedProvider, { in: 'headers' | 'query'; name: string }> = {
  easypost: { in: 'headers', name: 'x-hmac-signature' },
  aftership: { in: 'headers', name: 'aftership-hmac-sha256' },
  shippo: { in: 'query', name: 'token' },
  ship24: { in: 'headers', name: 'authorization' },
};

function signed(provider: FeedProvider, rawBody: Buffer, secret: string): InboundRequest {
  const proof = signFixture(provider, rawBody, secret);
  return { rawBody, headers: { 'content-type': 'application/json', ...proof.headers }, query: proof.query };
}

/** The request with its proof replaced (undefined: removed). */
function withProof(provider: FeedProvider, request: InboundRequest, value: string | string[] | undefined): InboundRequest {
  const where = CARRIER[provider];
  const part = { ...request[where.in] };
  if (value === undefined) delete part[where.name];
  else part[where.name] = value;
  return { ...request, [where.in]: part };
}

const proofOf = (provider: FeedProvider, request: InboundRequest) => request[CARRIER[provider].in][CARRIER[provider].name] as string;

const secretArbitrary = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 });

describe.each(FEED_PROVIDERS)('%s authentication', (provider) => {
  const module = FEED_PROVIDER_MODULES[provider];
  const secret = 'whsec_4f1d9c0b7e2a4d8f9a6b3c5e1f0a2b4c';
  const body = Buffer.from(fixtureText(FIXTURE_OF[provider]));
  const request = signed(provider, body, secret);

  it('accepts the request the provider signs with the feed secret', () => {
    expect(module.authenticate(request, secret)).toBe(true);
  });

  it('refuses a request without the signature', () => {
    expect(module.authenticate(withProof(provider, request, undefined), secret)).toBe(false);
  });

  it('refuses a request signed with another secret', () => {
    expect(module.authenticate(signed(provider, body, `${secret}x`), secret)).toBe(false);
  });

  const tampered = Buffer.from(body);
  tampered[tampered.indexOf('"', 100) + 1] ^= 0x01;
  if (provider === 'easypost' || provider === 'aftership') {
    it('refuses a body changed by one byte after signing', () => {
      expect(module.authenticate({ ...request, rawBody: tampered }, secret)).toBe(false);
    });
  } else {
    // Ship24's bearer secret and Shippo's token prove who sent the request, not what it says: the
    // scheme covers no byte of the body (TLS does).
    it('accepts a changed body: its scheme is a secret, not a signature of the body', () => {
      expect(module.authenticate({ ...request, rawBody: tampered }, secret)).toBe(true);
    });
  }

  it('refuses a signature of another length, truncated or lengthened, without throwing', () => {
    const proof = proofOf(provider, request);
    for (const other of ['', proof.slice(0, -1), `${proof}0`, `${proof} `]) {
      expect(module.authenticate(withProof(provider, request, other), secret)).toBe(false);
    }
  });

  it('refuses a signature sent twice (a repeated header or parameter)', () => {
    const proof = proofOf(provider, request);
    expect(module.authenticate(withProof(provider, request, [proof, proof]), secret)).toBe(false);
  });

  it('accepts exactly the bodies signed with the feed secret, for any body and secret', () => {
    fc.assert(
      // Bodies as UTF-8 text, as every provider sends JSON (EasyPost's check, like its library's, reads the body as UTF-8).
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), secretArbitrary, secretArbitrary, (text, feedSecret, signingSecret) => {
        const raw = Buffer.from(text, 'utf8');
        const sameSecret = module.authenticate(signed(provider, raw, feedSecret), feedSecret);
        const otherSecret = module.authenticate(signed(provider, raw, signingSecret), feedSecret);
        // Shippo's token is the secret itself: equal tokens are the same secret. HMAC providers: a
        // different secret is refused (a collision is not a concern at 256 bits); EasyPost keys with the
        // NFKD form, so two secrets with the same NFKD form are one secret.
        const same =
          provider === 'easypost' ? signingSecret.normalize('NFKD') === feedSecret.normalize('NFKD') : signingSecret === feedSecret;
        return sameSecret && otherSecret === same;
      }),
      { numRuns: 200 },
    );
  });
});

describe('ship24 authentication scheme', () => {
  const secret = 'whsec_4f1d9c0b7e2a4d8f9a6b3c5e1f0a2b4c';
  const request = (authorization: string): InboundRequest => ({ rawBody: Buffer.from('{}'), headers: { authorization }, query: {} });

  it('reads the Bearer scheme in any case, as HTTP defines auth schemes (RFC 9110 §11.1), and only that scheme', () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER'])
      expect(FEED_PROVIDER_MODULES.ship24.authenticate(request(`${scheme} ${secret}`), secret)).toBe(true);
    expect(FEED_PROVIDER_MODULES.ship24.authenticate(request(`Basic ${secret}`), secret)).toBe(false);
    expect(FEED_PROVIDER_MODULES.ship24.authenticate(request(`Bearer ${secret.toUpperCase()}`), secret)).toBe(false);
  });
});

describe('constantTimeEqual', () => {
  it('is string equality for any two strings, of any lengths, without throwing', () => {
    // Any UTF-16 code units, lone surrogates included (which UTF-8 would turn into one U+FFFD).
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)), maxLength: 8 }),
      fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)), maxLength: 2 }),
    );
    // A third of the pairs equal and a third one a prefix of the other: both answers, both length cases.
    const pair = fc.oneof(
      fc.tuple(text, text),
      text.map((s) => [s, s] as const),
      fc.tuple(text, text).map(([s, t]) => [s, s + t] as const),
    );
    fc.assert(
      fc.property(pair, ([a, b]) => constantTimeEqual(a, b) === (a === b)),
      { numRuns: 500 },
    );
  });
});
