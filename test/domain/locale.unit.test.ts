// Locale negotiation (domain/locale.ts): `?locale=` → registered locale → the destination
// country's main language → English, each mapped to a catalog by CLDR language matching.
import { describe, it, expect } from '@jest/globals';
import { COUNTRY_LANGUAGE, negotiateLocale, SUPPORTED_LOCALES } from '../../domain/locale.js';
import { renderSuggestion } from '../../domain/messages.js';

describe('locale negotiation order', () => {
  it('uses the requested locale first', () => {
    expect(negotiateLocale({ requestedLocale: 'fr', registeredLocale: 'en', countryCode: 'GB' })).toEqual({ language: 'fr', locale: 'fr' });
  });

  it('uses the registered locale when none is requested', () => {
    expect(negotiateLocale({ registeredLocale: 'de', countryCode: 'GB' })).toEqual({ language: 'de', locale: 'de' });
  });

  it('skips a requested language without a catalog and takes the registered one', () => {
    expect(negotiateLocale({ requestedLocale: 'ja', registeredLocale: 'fr', countryCode: 'DE' }).language).toBe('fr');
  });

  it('skips a tag that is not BCP 47 rather than failing', () => {
    expect(negotiateLocale({ requestedLocale: 'not a tag!', countryCode: 'FR' }).language).toBe('fr');
  });

  it('falls back to English for a country it knows nothing about', () => {
    expect(negotiateLocale({ countryCode: 'ZW' })).toEqual({ language: 'en', locale: 'en' });
  });

  it('falls back to English when the country’s language has no catalog and no close match (Japan, Finland)', () => {
    expect(negotiateLocale({ countryCode: 'JP' })).toEqual({ language: 'en', locale: 'en' });
    expect(negotiateLocale({ countryCode: 'FI' })).toEqual({ language: 'en', locale: 'en' });
  });
});

describe('destination country’s main language', () => {
  it('names the language with that country as region', () => {
    const expected: Record<string, string> = {
      FR: 'fr-FR',
      GB: 'en-GB',
      US: 'en-US',
      DE: 'de-DE',
      AT: 'de-AT',
      CH: 'de-CH',
      BE: 'nl-BE',
      NL: 'nl-NL',
      ES: 'es-ES',
      MX: 'es-MX',
      IT: 'it-IT',
      PT: 'pt-PT',
      BR: 'pt-BR',
      PL: 'pl-PL',
      SE: 'sv-SE',
      DK: 'da-DK',
      LU: 'fr-LU',
    };
    for (const [countryCode, locale] of Object.entries(expected)) expect(negotiateLocale({ countryCode }).locale).toBe(locale);
  });

  it('accepts a lower-case country code', () => {
    expect(negotiateLocale({ countryCode: 'us' })).toEqual({ language: 'en', locale: 'en-US' });
  });

  it('renders Dutch for a Belgian destination without a known language', () => {
    const { locale, recommended_message } = renderSuggestion({
      status: 'in_transit',
      window: { min: '2026-11-24', max: '2026-11-26' },
      confidence: 'High',
      countryCode: 'BE',
    });
    expect(locale).toBe('nl-BE');
    expect(recommended_message).toBe('Je kaart is onderweg en wordt naar verwachting tussen 24 en 26 november bezorgd.');
  });

  it('gives Norwegian Bokmål readers Danish, as CLDR language matching suggests', () => {
    expect(negotiateLocale({ countryCode: 'NO' })).toEqual({ language: 'da', locale: 'da-NO' });
  });

  it('lists only well-formed language subtags', () => {
    for (const language of Object.values(COUNTRY_LANGUAGE)) expect(language).toMatch(/^[a-z]{2,3}$/);
  });
});

describe('tags and regions', () => {
  it('keeps the requested region of a supported language (fr-CA, pt-BR, es-MX)', () => {
    expect(negotiateLocale({ requestedLocale: 'fr-CA', countryCode: 'CA' })).toEqual({ language: 'fr', locale: 'fr-CA' });
    expect(negotiateLocale({ requestedLocale: 'pt-BR', countryCode: 'PT' })).toEqual({ language: 'pt', locale: 'pt-BR' });
    expect(negotiateLocale({ requestedLocale: 'es-MX', countryCode: 'US' })).toEqual({ language: 'es', locale: 'es-MX' });
  });

  it('drops Unicode extensions, so a tag cannot switch the calendar of the message', () => {
    expect(negotiateLocale({ requestedLocale: 'en-GB-u-ca-buddhist', countryCode: 'GB' }).locale).toBe('en-GB');
    expect(negotiateLocale({ requestedLocale: 'de-DE-u-nu-arab', countryCode: 'DE' }).locale).toBe('de-DE');
  });

  it('matches related languages as CLDR suggests (Breton → French, Catalan → Spanish, Luxembourgish → German)', () => {
    expect(negotiateLocale({ requestedLocale: 'br', countryCode: 'GB' })).toEqual({ language: 'fr', locale: 'fr' });
    expect(negotiateLocale({ requestedLocale: 'ca', countryCode: 'GB' }).language).toBe('es');
    expect(negotiateLocale({ requestedLocale: 'lb', countryCode: 'GB' }).language).toBe('de');
  });

  it('always names a supported language', () => {
    for (const requestedLocale of [undefined, 'de', 'fr-BE', 'en-IN', 'zh-Hant-TW', 'und', 'sv-FI', 'nl-SR']) {
      for (const countryCode of ['FR', 'CA', 'CH', 'JP', 'SN', 'NO', 'AD']) {
        const { locale } = negotiateLocale({ requestedLocale, countryCode });
        expect(SUPPORTED_LOCALES).toContain(new Intl.Locale(locale).language);
      }
    }
  });
});
