// UI suggestion rendering (domain/messages.ts) and locale negotiation (domain/locale.ts): wording
// per status and confidence, dates per locale, recommended action, and which language is chosen.
import { describe, it, expect } from '@jest/globals';
import { renderSuggestion, SUPPORTED_LOCALES, type SuggestionInput } from '../../domain/messages.js';
import { negotiateLocale } from '../../domain/locale.js';
import { CONFIDENCE_LEVELS, DISPATCH_STATUSES, EXCEPTION_REASONS } from '../../domain/schemas.js';

const NOV_24_TO_26 = { min: '2026-11-24', max: '2026-11-26' };

function render(overrides: Partial<SuggestionInput>): ReturnType<typeof renderSuggestion> {
  return renderSuggestion({ status: 'in_transit', window: NOV_24_TO_26, confidence: 'High', countryCode: 'GB', ...overrides });
}

const message = (overrides: Partial<SuggestionInput>) => render(overrides).recommended_message;

describe('wording', () => {
  it('tells an English reader when the card in transit should arrive', () => {
    expect(message({ requestedLocale: 'en-GB' })).toBe('Your card is on its way. It should arrive between 24 and 26 November.');
  });

  it('tells a French reader when the card in transit should arrive', () => {
    expect(message({ requestedLocale: 'fr' })).toBe('Votre carte est en route. Elle devrait arriver entre le 24 et le 26 novembre.');
  });

  it('says that a Low confidence estimate is less certain', () => {
    expect(message({ requestedLocale: 'en-GB', confidence: 'Low' })).toBe(
      'Your card is on its way. It should arrive between 24 and 26 November, but this estimate is less certain for your area.',
    );
    expect(message({ requestedLocale: 'fr', confidence: 'Low' })).toContain('cette estimation est moins fiable');
  });

  it('words Medium confidence differently from High and Low', () => {
    for (const requestedLocale of SUPPORTED_LOCALES) {
      const medium = message({ requestedLocale, confidence: 'Medium' });
      expect(medium).not.toBe(message({ requestedLocale, confidence: 'High' }));
      expect(medium).not.toBe(message({ requestedLocale, confidence: 'Low' }));
    }
  });

  it('says the card has been sent while dispatched', () => {
    expect(message({ status: 'dispatched', requestedLocale: 'en-GB' })).toBe(
      'Your card has been sent. It should arrive between 24 and 26 November.',
    );
  });

  it('says the card is out for delivery', () => {
    const today = { min: '2026-11-24', max: '2026-11-24' };
    expect(message({ status: 'out_for_delivery', window: today, requestedLocale: 'en-GB' })).toBe(
      'Your card is out for delivery and should arrive on 24 November.',
    );
    expect(message({ status: 'out_for_delivery', window: today, requestedLocale: 'fr' })).toBe(
      'Votre carte est en cours de livraison et devrait arriver le 24 novembre.',
    );
  });

  it('recommends activating a delivered card, giving the delivery date', () => {
    const delivered = { status: 'delivered' as const, window: { min: '2026-11-25', max: '2026-11-25' } };
    expect(message({ ...delivered, requestedLocale: 'en-GB' })).toBe(
      'Your card was delivered on 25 November. Activate it to start using it.',
    );
    expect(message({ ...delivered, requestedLocale: 'fr' })).toBe(
      'Votre carte a été livrée le 25 novembre. Activez-la pour commencer à l’utiliser.',
    );
  });
});

describe('exception wording', () => {
  const exception = { status: 'exception' as const, confidence: 'Low' as const, window: { min: '2026-11-30', max: '2026-12-02' } };

  it('says why and asks to contact support after a failed delivery attempt', () => {
    expect(message({ ...exception, exceptionReason: 'failed_attempt', requestedLocale: 'en-GB' })).toBe(
      'The carrier could not deliver your card. Please contact support to arrange a new delivery, possibly between 30 November and 2 December.',
    );
  });

  it('says why and asks to contact support after a postal delay', () => {
    const en = message({ ...exception, exceptionReason: 'postal_delay', requestedLocale: 'en-GB' });
    expect(en).toContain('postal delay');
    expect(en).toContain('contact support');
    expect(message({ ...exception, exceptionReason: 'postal_delay', requestedLocale: 'fr' })).toContain('retard');
  });

  it('has a distinct message for every reason in every language', () => {
    for (const requestedLocale of SUPPORTED_LOCALES) {
      const messages = EXCEPTION_REASONS.map((exceptionReason) => message({ ...exception, exceptionReason, requestedLocale }));
      expect(new Set(messages).size).toBe(EXCEPTION_REASONS.length);
    }
  });

  it('asks to contact support for every reason in every language', () => {
    for (const exceptionReason of EXCEPTION_REASONS) {
      expect(message({ ...exception, exceptionReason, requestedLocale: 'en' })).toContain('contact support');
      expect(message({ ...exception, exceptionReason, requestedLocale: 'fr' })).toContain('Contactez le service client');
    }
  });

  it('uses the generic exception message when the reason is unknown', () => {
    expect(message({ ...exception, requestedLocale: 'en' })).toBe(
      message({ ...exception, exceptionReason: 'other', requestedLocale: 'en' }),
    );
  });
});

describe('dates', () => {
  it('writes a single day as "on 24 November" in English and "le 24 novembre" in French', () => {
    const day = { status: 'delivered' as const, window: { min: '2026-11-24', max: '2026-11-24' } };
    expect(message({ ...day, requestedLocale: 'en-GB' })).toContain('on 24 November.');
    expect(message({ ...day, requestedLocale: 'fr' })).toContain('le 24 novembre.');
  });

  it('names both months when the window crosses a month end', () => {
    const window = { min: '2026-11-30', max: '2026-12-02' };
    expect(message({ window, requestedLocale: 'en-GB' })).toContain('between 30 November and 2 December.');
    expect(message({ window, requestedLocale: 'fr' })).toContain('entre le 30 novembre et le 2 décembre.');
  });

  it('puts the month first where the locale does (en-US)', () => {
    expect(message({ requestedLocale: 'en-US' })).toContain('between November 24 and 26.');
    expect(message({ requestedLocale: 'en-US', window: { min: '2026-11-30', max: '2026-12-02' } })).toContain(
      'between November 30 and December 2.',
    );
  });

  it('writes the first of the month as "1er" in French', () => {
    expect(message({ requestedLocale: 'fr', window: { min: '2026-12-01', max: '2026-12-03' } })).toContain(
      'entre le 1er et le 3 décembre.',
    );
    expect(message({ requestedLocale: 'fr', window: { min: '2026-11-27', max: '2026-12-01' } })).toContain(
      'entre le 27 novembre et le 1er décembre.',
    );
  });
});

describe('recommended_action', () => {
  it('is Activate when delivered, ContactSupport in exception, None otherwise', () => {
    expect(render({ status: 'delivered' }).recommended_action).toBe('Activate');
    expect(render({ status: 'exception', exceptionReason: 'lost' }).recommended_action).toBe('ContactSupport');
    for (const status of ['dispatched', 'in_transit', 'out_for_delivery'] as const) {
      expect(render({ status }).recommended_action).toBe('None');
    }
  });
});

describe('every message', () => {
  const cases = SUPPORTED_LOCALES.flatMap((requestedLocale) =>
    DISPATCH_STATUSES.flatMap((status) =>
      CONFIDENCE_LEVELS.flatMap((confidence) =>
        (status === 'exception' ? EXCEPTION_REASONS : [undefined]).map((exceptionReason) => ({
          requestedLocale,
          status,
          confidence,
          exceptionReason,
        })),
      ),
    ),
  );

  it('is plain text of one or two complete sentences, with every argument filled in', () => {
    for (const overrides of cases) {
      const text = message(overrides);
      expect(text).not.toMatch(/[{}<>]|undefined|NaN|\s{2}/);
      expect(text).toMatch(/^[A-Z].*\.$/);
      expect(text.split(/[.!?](?:\s|$)/).filter(Boolean).length).toBeLessThanOrEqual(2);
    }
  });

  it('is in the language named by its locale', () => {
    for (const overrides of cases) {
      const { locale, recommended_message } = render(overrides);
      const french = /\b(Votre|votre|Le|L’|Un)\b/.test(recommended_message);
      expect(new Intl.Locale(locale).language).toBe(french ? 'fr' : 'en');
      expect(new Intl.Locale(locale).language).toBe(overrides.requestedLocale);
    }
  });
});

describe('locale negotiation', () => {
  it('uses the requested locale first', () => {
    expect(negotiateLocale({ requestedLocale: 'fr', registeredLocale: 'en', countryCode: 'GB' })).toEqual({ language: 'fr', locale: 'fr' });
  });

  it('uses the registered locale when none is requested', () => {
    expect(negotiateLocale({ registeredLocale: 'fr', countryCode: 'GB' })).toEqual({ language: 'fr', locale: 'fr' });
  });

  it('skips a requested language without a catalog and takes the registered one', () => {
    expect(negotiateLocale({ requestedLocale: 'de', registeredLocale: 'fr', countryCode: 'DE' }).language).toBe('fr');
  });

  it('skips a tag that is not BCP 47 rather than failing', () => {
    expect(negotiateLocale({ requestedLocale: 'not a tag!', countryCode: 'FR' }).language).toBe('fr');
  });

  it('falls back to the destination country’s main language, with that region', () => {
    expect(negotiateLocale({ countryCode: 'FR' })).toEqual({ language: 'fr', locale: 'fr-FR' });
    expect(negotiateLocale({ countryCode: 'GB' })).toEqual({ language: 'en', locale: 'en-GB' });
    expect(negotiateLocale({ countryCode: 'us' })).toEqual({ language: 'en', locale: 'en-US' });
  });

  it('falls back to English when the country’s language has no catalog (DE, BE → nl)', () => {
    expect(negotiateLocale({ countryCode: 'DE' })).toEqual({ language: 'en', locale: 'en' });
    expect(negotiateLocale({ countryCode: 'BE' })).toEqual({ language: 'en', locale: 'en' });
  });

  it('falls back to English for a country it knows nothing about', () => {
    expect(negotiateLocale({ countryCode: 'ZW' })).toEqual({ language: 'en', locale: 'en' });
  });

  it('keeps the requested region of a supported language (fr-CA)', () => {
    expect(negotiateLocale({ requestedLocale: 'fr-CA', countryCode: 'CA' })).toEqual({ language: 'fr', locale: 'fr-CA' });
    expect(render({ requestedLocale: 'fr-CA' }).locale).toBe('fr-CA');
  });

  it('drops Unicode extensions, so a tag cannot switch the calendar of the message', () => {
    expect(negotiateLocale({ requestedLocale: 'en-GB-u-ca-buddhist', countryCode: 'GB' }).locale).toBe('en-GB');
    expect(message({ requestedLocale: 'en-GB-u-ca-buddhist' })).toContain('24 and 26 November');
  });

  it('reads French for a language CLDR matches to French (Breton)', () => {
    expect(negotiateLocale({ requestedLocale: 'br', countryCode: 'GB' })).toEqual({ language: 'fr', locale: 'fr' });
  });

  it('always names a supported language', () => {
    for (const requestedLocale of [undefined, 'de', 'fr-BE', 'en-IN', 'zh-Hant-TW', 'und']) {
      for (const countryCode of ['FR', 'CA', 'CH', 'JP', 'SN']) {
        const { locale } = negotiateLocale({ requestedLocale, countryCode });
        expect(SUPPORTED_LOCALES).toContain(new Intl.Locale(locale).language);
      }
    }
  });
});
