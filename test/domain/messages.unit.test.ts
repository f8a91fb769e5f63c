// UI suggestion rendering (domain/messages.ts): wording per status and confidence, dates per
// locale, recommended action. Every message of every language is pinned by message-tables.unit.test.ts;
// which language is chosen is tested in locale.unit.test.ts.
import { describe, it, expect } from '@jest/globals';
import { renderSuggestion, SUPPORTED_LOCALES, type SuggestionInput } from '../../domain/messages.js';
import { CONFIDENCE_LEVELS, DISPATCH_STATUSES, EXCEPTION_REASONS, SERVICE_EXCEPTION_REASONS } from '../../domain/vocabulary.js';

/** Every reason a dispatch in exception can hold: the carrier's and the service's own (`overdue`). */
const ALL_EXCEPTION_REASONS = [...EXCEPTION_REASONS, ...SERVICE_EXCEPTION_REASONS];

const NOV_24_TO_26 = { min: '2026-11-24', max: '2026-11-26' };

/** How each language asks the cardholder to contact support. */
const CONTACT_SUPPORT: Record<(typeof SUPPORTED_LOCALES)[number], string> = {
  en: 'contact support',
  fr: 'Contactez le service client',
  de: 'wenden Sie sich an den Kundenservice',
  es: 'Ponte en contacto con atención al cliente',
  it: 'Contatta il servizio clienti',
  nl: 'Neem contact op met de klantenservice',
  pt: 'Contacte o apoio ao cliente',
  pl: 'Skontaktuj się z obsługą klienta',
  sv: 'Kontakta kundtjänst',
  da: 'Kontakt kundeservice',
};

/** The word for the card in each language: every message talks about it. */
const CARD: Record<(typeof SUPPORTED_LOCALES)[number], RegExp> = {
  en: /\bcard\b/,
  fr: /\bcarte\b/,
  de: /\bKarte\b/,
  es: /\btarjeta\b/,
  it: /\bcarta\b/,
  nl: /\bkaart\b/,
  pt: /cartão/,
  pl: /\bkart[ay]\b/,
  sv: /\bDitt kort\b|\bditt kort\b/,
  da: /\bDit kort\b|\bdit kort\b/,
};

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

  it('tells a German reader when the card in transit should arrive, formally', () => {
    expect(message({ requestedLocale: 'de' })).toBe(
      'Ihre Karte ist unterwegs. Sie sollte zwischen dem 24. und 26. November bei Ihnen eintreffen.',
    );
  });

  it('says in every language that a Low confidence estimate is less certain', () => {
    const lessCertain: Record<string, RegExp> = {
      de: /weniger zuverlässig/,
      es: /menos precisa/,
      it: /meno precisa/,
      nl: /minder zeker/,
      pt: /menos precisa/,
      pl: /mniej pewny/,
      sv: /mindre säker/,
      da: /mindre sikkert/,
    };
    for (const [requestedLocale, hedge] of Object.entries(lessCertain)) {
      for (const status of ['dispatched', 'in_transit', 'out_for_delivery'] as const) {
        expect(message({ requestedLocale, status, confidence: 'Low' })).toMatch(hedge);
        expect(message({ requestedLocale, status, confidence: 'High' })).not.toMatch(hedge);
      }
    }
  });

  it('recommends activating a delivered card in every language', () => {
    const activate: Record<string, RegExp> = {
      de: /Aktivieren Sie sie/,
      es: /Actívala/,
      it: /Attivala/,
      nl: /Activeer je kaart/,
      pt: /Ative-o/,
      pl: /Aktywuj ją/,
      sv: /Aktivera det/,
      da: /Aktivér kortet/,
    };
    for (const [requestedLocale, action] of Object.entries(activate)) {
      expect(message({ requestedLocale, status: 'delivered', window: { min: '2026-11-25', max: '2026-11-25' } })).toMatch(action);
    }
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
      const messages = ALL_EXCEPTION_REASONS.map((exceptionReason) => message({ ...exception, exceptionReason, requestedLocale }));
      expect(new Set(messages).size).toBe(ALL_EXCEPTION_REASONS.length);
    }
  });

  it('asks to contact support for every reason in every language', () => {
    for (const requestedLocale of SUPPORTED_LOCALES) {
      for (const exceptionReason of ALL_EXCEPTION_REASONS) {
        expect(message({ ...exception, exceptionReason, requestedLocale })).toContain(CONTACT_SUPPORT[requestedLocale]);
      }
    }
  });

  // The service's own reason (docs/states.md "Overdue"): no carrier said what happened, so the
  // message says only that the card is late beyond its window, in every language.
  it.each([
    ['en', 'Your card has not arrived within the expected time. Please contact support to check on it or have it replaced.'],
    ['fr', 'Votre carte n’est pas arrivée dans les délais prévus. Contactez le service client pour faire le point ou la faire remplacer.'],
    [
      'de',
      'Ihre Karte ist nicht im erwarteten Zeitraum angekommen. Bitte wenden Sie sich an den Kundenservice, um nachzuforschen oder eine Ersatzkarte zu erhalten.',
    ],
    [
      'es',
      'Tu tarjeta no ha llegado en el plazo previsto. Ponte en contacto con atención al cliente para comprobar qué ha pasado o pedir una tarjeta nueva.',
    ],
    [
      'it',
      'La tua carta non è arrivata nei tempi previsti. Contatta il servizio clienti per verificare la spedizione o richiederne una nuova.',
    ],
    [
      'nl',
      'Je kaart is niet binnen de verwachte tijd aangekomen. Neem contact op met de klantenservice om dit na te gaan of een nieuwe kaart aan te vragen.',
    ],
    ['pt', 'O seu cartão não chegou dentro do prazo previsto. Contacte o apoio ao cliente para verificar o envio ou pedir um cartão novo.'],
    ['pl', 'Twoja karta nie dotarła w przewidywanym terminie. Skontaktuj się z obsługą klienta, aby to sprawdzić lub zamówić nową kartę.'],
    ['sv', 'Ditt kort har inte kommit fram inom den förväntade tiden. Kontakta kundtjänst för att undersöka saken eller få ett nytt kort.'],
    ['da', 'Dit kort er ikke nået frem inden for den forventede tid. Kontakt kundeservice for at undersøge sagen eller få et nyt kort.'],
  ] as const)('says in %s that an overdue card has not arrived in time and asks to contact support', (requestedLocale, expected) => {
    const rendered = render({ ...exception, exceptionReason: 'overdue', requestedLocale });
    expect(rendered.recommended_message).toBe(expected);
    expect(rendered.recommended_action).toBe('ContactSupport');
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

  it('writes a range in each language’s own grammar', () => {
    const expected: Record<string, string> = {
      de: 'zwischen dem 24. und 26. November',
      es: 'entre el 24 y el 26 de noviembre',
      it: 'tra il 24 e il 26 novembre',
      nl: 'tussen 24 en 26 november',
      pt: 'entre 24 e 26 de novembro',
      pl: 'między 24 a 26 listopada',
      sv: 'mellan den 24 och 26 november',
      da: 'mellem den 24. og 26. november',
    };
    for (const [requestedLocale, range] of Object.entries(expected)) expect(message({ requestedLocale })).toContain(range);
  });

  it('uses the genitive month names Polish dates need, from Intl', () => {
    expect(message({ requestedLocale: 'pl', window: { min: '2026-11-30', max: '2026-12-02' } })).toContain(
      'między 30 listopada a 2 grudnia.',
    );
    expect(message({ requestedLocale: 'pl', status: 'delivered', window: { min: '2026-03-05', max: '2026-03-05' } })).toContain(
      'doręczona 5 marca.',
    );
  });

  it('takes regional month names from Intl (Austrian German says "Jänner")', () => {
    expect(message({ requestedLocale: 'de-AT', window: { min: '2027-01-12', max: '2027-01-14' } })).toContain(
      'zwischen dem 12. und 14. Jänner bei Ihnen',
    );
  });

  it('writes "1º" and elides the Italian article before 8 and 11', () => {
    expect(message({ requestedLocale: 'it', window: { min: '2026-12-01', max: '2026-12-08' } })).toContain('tra il 1º e l’8 dicembre.');
    expect(message({ requestedLocale: 'it', status: 'delivered', window: { min: '2026-11-11', max: '2026-11-11' } })).toContain(
      'consegnata l’11 novembre.',
    );
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
        (status === 'exception' ? ALL_EXCEPTION_REASONS : [undefined]).map((exceptionReason) => ({
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
      expect(text).not.toMatch(/[{}<>'"]|undefined|NaN|\s{2}/);
      expect(text).toMatch(/^\p{Lu}.*\.$/u);
      // A full stop after a digit is an ordinal day ("am 24. November"), not a sentence end.
      expect(text.split(/(?<!\d)[.!?](?:\s|$)/).filter(Boolean).length).toBeLessThanOrEqual(2);
    }
  });

  it('is in the language named by its locale', () => {
    for (const overrides of cases) {
      const { locale, recommended_message } = render(overrides);
      expect(new Intl.Locale(locale).language).toBe(overrides.requestedLocale);
      expect(recommended_message).toMatch(CARD[overrides.requestedLocale]);
    }
  });
});
