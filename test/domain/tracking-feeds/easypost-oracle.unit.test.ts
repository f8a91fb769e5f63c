// EasyPost's own library as the oracle of our EasyPost check (DESIGN §10 "Inbound": keyed with the
// NFKD form of the secret, as EasyPost's library verifies): for any body, secret and signature
// header, `@easypost/api`'s Utils.validateWebhook accepts ⇔ domain/tracking-feeds/easypost.ts
// accepts, where the body is JSON (the library also parses the body and refuses one that is not; we
// leave that to the parse, which answers 400). The library is a dev dependency used here only;
// production code never imports it.
import { describe, expect, it } from '@jest/globals';
import * as easypostApi from '@easypost/api';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { easypost } from '../../../domain/tracking-feeds/easypost.js';
import { fixtureText } from '../../fixtures/tracking-feeds/load.js';

// The package's types describe its CommonJS build; Jest loads its ES module, whose default export is the client.
type Client = typeof easypostApi.default.default;
const EasyPostClient = (easypostApi as unknown as { default: Client }).default;
const oracle = new EasyPostClient('EZTK_not_used_offline').Utils;

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

function oracleAccepts(rawBody: Buffer, signature: string | undefined, secret: string): boolean {
  try {
    oracle.validateWebhook(rawBody, signature === undefined ? {} : { 'x-hmac-signature': signature }, secret);
    return true;
  } catch {
    return false;
  }
}

const weAccept = (rawBody: Buffer, signature: string | undefined, secret: string) =>
  easypost.authenticate({ rawBody, headers: signature === undefined ? {} : { 'x-hmac-signature': signature }, query: {} }, secret);

const sign = (body: Buffer | string, key: string) => `hmac-sha256-hex=${createHmac('sha256', key).update(body).digest('hex')}`;

// Secrets with characters NFKD changes (ligatures, full-width forms, composed accents, Ångström sign).
const secret = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
  fc.constantFrom('ﬁsh-secret', 'ＷＥＢＨＯＯＫ', 'café', 'cafe\u0301', 'Å-unit', 'sécrét-²'),
);
// JSON-ish bodies, including the whole-number `"weight": 12` the library rewrites before hashing.
const body = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc
    .tuple(fc.nat(5000), fc.constantFrom('', ' '), fc.string({ maxLength: 20 }))
    .map(([w, sp, tail]) => `{"result":{"weight":${sp}${w}${sp},"x":${JSON.stringify(tail)}}}`),
  fc.tuple(fc.nat(5000), fc.nat(9)).map(([w, d]) => `{"result":{"weight": ${w}.${d}}}`),
);

describe('EasyPost signature, with @easypost/api as the oracle', () => {
  it('accepts the recorded fixture signed with the secret, as the library does', () => {
    const raw = Buffer.from(fixtureText('easypost'));
    const signature = sign(raw, 'whsec_fixture');
    expect(oracleAccepts(raw, signature, 'whsec_fixture')).toBe(true);
    expect(weAccept(raw, signature, 'whsec_fixture')).toBe(true);
  });

  it('accepts what the library accepts and refuses what it refuses, for every JSON body, secret and header', () => {
    fc.assert(
      fc.property(body, secret, secret, fc.nat(4), fc.string({ maxLength: 80 }), (text, feedSecret, signingSecret, variant, junk) => {
        const raw = Buffer.from(text, 'utf8');
        const signatures: (string | undefined)[] = [
          sign(raw, signingSecret.normalize('NFKD')), // signed over the raw bytes
          sign(raw, signingSecret), // keyed with the secret as typed, not its NFKD form
          sign(text.replace(/("weight":\s*)(\d+)(\s*)(?=,|\})/g, '$1$2.0'), feedSecret.normalize('NFKD')), // as EasyPost signs
          junk,
          undefined,
        ];
        const signature = signatures[variant];
        return oracleAccepts(raw, signature, feedSecret) === (weAccept(raw, signature, feedSecret) && isJson(text));
      }),
      { numRuns: 400 },
    );
  });

  it('accepts a body whose whole-number weight was re-serialised, as the library does (its documented fix)', () => {
    const sent = '{"result":{"weight": 12.0,"id":"trk_1"}}';
    const received = Buffer.from('{"result":{"weight": 12,"id":"trk_1"}}');
    const signature = sign(sent, 'secret');
    expect(oracleAccepts(received, signature, 'secret')).toBe(true);
    expect(weAccept(received, signature, 'secret')).toBe(true);
  });

  it('refuses what the library refuses: a signature keyed with the secret as typed when its NFKD form differs', () => {
    const raw = Buffer.from('{"description":"tracker.updated"}');
    const signature = sign(raw, 'ﬁsh');
    expect(oracleAccepts(raw, signature, 'ﬁsh')).toBe(false);
    expect(weAccept(raw, signature, 'ﬁsh')).toBe(false);
    expect(weAccept(raw, sign(raw, 'fish'), 'ﬁsh')).toBe(true);
  });
});
