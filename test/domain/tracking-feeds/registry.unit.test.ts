// The registry and the helpers the service side matches with (domain/tracking-feeds/index.ts,
// provider.ts, references.ts): every provider of FEED_PROVIDERS has its module under its own name,
// the secret each needs (Shippo: a token the service generates), tracking numbers compared upper-case
// without spaces, carrier names that agree across the providers' codes and an issuer's own words,
// and references that surface a dispatch id written inside free text.
import { describe, expect, it } from '@jest/globals';
import {
  carriersAgree,
  FEED_PROVIDER_MODULES,
  FEED_PROVIDERS,
  normaliseCarrier,
  normaliseTrackingNumber,
} from '../../../domain/tracking-feeds/index.js';
import { referencesFrom } from '../../../domain/tracking-feeds/references.js';

describe('the provider registry', () => {
  it('lists one module per provider, under its own name, with where to paste the URL', () => {
    expect(Object.keys(FEED_PROVIDER_MODULES).sort()).toEqual([...FEED_PROVIDERS].sort());
    for (const provider of FEED_PROVIDERS) {
      expect(FEED_PROVIDER_MODULES[provider].name).toBe(provider);
      expect(FEED_PROVIDER_MODULES[provider].setupHint).toMatch(/URL/);
    }
  });

  it('asks the provider’s secret of EasyPost, AfterShip and Ship24, and a generated token for Shippo', () => {
    expect(Object.fromEntries(FEED_PROVIDERS.map((p) => [p, FEED_PROVIDER_MODULES[p].secret]))).toEqual({
      easypost: 'provider',
      aftership: 'provider',
      shippo: 'generated-token',
      ship24: 'provider',
    });
  });
});

describe('matching helpers', () => {
  it('compares tracking numbers upper-case without whitespace', () => {
    expect(normaliseTrackingNumber(' 9400 1118\t9922 ab ')).toBe('940011189922AB');
  });

  it('writes carrier names as slugs', () => {
    expect(normaliseCarrier(' Royal Mail ')).toBe('royal-mail');
    expect(normaliseCarrier('DHLExpress')).toBe('dhlexpress');
  });

  it('lets carrier names agree across the providers’ codes and the issuer’s words, and only then', () => {
    for (const [a, b] of [
      ['DHLExpress', 'DHL'],
      ['us-post', 'USPS'],
      ['royal-mail', 'Royal Mail'],
      ['usps', undefined],
      ['fr-post', 'La Poste'],
      ['usps', 'US Postal Service'],
      ['dhl', 'Deutsche Post DHL'],
      ['royal-mail', 'Parcelforce Worldwide'],
      ['fedex', 'Federal Express Corporation'],
    ] as const) {
      expect([a, b, carriersAgree(a, b)]).toEqual([a, b, true]);
    }
    expect(carriersAgree('UPS', 'FedEx')).toBe(false);
    expect(carriersAgree('dhl', 'usps')).toBe(false);
    expect(carriersAgree('UPS', 'USPS')).toBe(false);
    expect(carriersAgree('US Postal Service', 'UPS')).toBe(false);
  });

  it('gives each reference as written, and every dispatch id written inside one', () => {
    expect(referencesFrom('Order 118204, dispatch 5F1C0D2E-8B7A-4C3D-9E4F-1A2B3C4D5E6F', null, ' ', 'card-1')).toEqual([
      'Order 118204, dispatch 5F1C0D2E-8B7A-4C3D-9E4F-1A2B3C4D5E6F',
      '5f1c0d2e-8b7a-4c3d-9e4f-1a2b3c4d5e6f',
      'card-1',
    ]);
  });
});
