// What the tracking page says, before any HTML (domain/tracking-page.ts, domain/tracking-links.ts):
// every one of the ten languages renders every state with no placeholder left, dates as each
// language writes them, the language order of docs/tracking-page.md "The page", the steps, the postal code compared as
// the prediction normalises it, the accent colour's contrast and the link's expiry bounds.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { SUPPORTED_LOCALES } from '../../domain/locale.js';
import { CATALOGS } from '../../domain/locales/index.js';
import { contrastWithWhite, linkExpiry, newTrackingToken, TOKEN_PATTERN, tokenMatches, trackingPageBrandingPatch } from '../../domain/tracking-links.js'; // prettier-ignore
import {
  acceptedLanguages,
  pageLanguage,
  pageView,
  postalCodeMatches,
  windowText as writtenWindow,
  type PageInput,
} from '../../domain/tracking-page.js';
import { acceptLanguageHeaders, expectChoiceFits } from '../support/accept-language.js';

const issuer = { name: 'Acme', branding: { display_name: 'Acme Bank', accent_color: '#0b5cad', activation_url: 'https://acme.example/a', support_url: null, support_phone: '+33142685300' } }; // prettier-ignore
/** Every exception reason the page words, the service's own `overdue` included (one list: the catalogue's). */
const REASONS = Object.keys(CATALOGS.en.page.reasons) as Array<keyof typeof CATALOGS.en.page.reasons>;

const input = (status: PageInput['status'], overrides: Partial<PageInput> = {}): PageInput => ({
  status,
  windowMin: '2026-12-03',
  windowMax: '2026-12-05',
  confidence: 'Medium',
  exceptionReason: status === 'exception' ? 'failed_attempt' : null,
  registeredLocale: null,
  countryCode: 'FR',
  events: [{ status: 'in_transit', occurredAt: new Date('2026-12-01T09:00:00Z'), reason: null }],
  updatedAt: new Date('2026-12-01T09:00:05Z'),
  ...overrides,
});

describe('the page in ten languages', () => {
  it('renders every status and exception reason in every language with no ICU placeholder left', () => {
    for (const lang of SUPPORTED_LOCALES) {
      const language = pageLanguage({ lang });
      expect(language.language).toBe(lang);
      const states: PageInput[] = [
        ...(['dispatched', 'in_transit', 'out_for_delivery', 'delivered'] as const).map((s) => input(s)),
        ...REASONS.map((reason) => input('exception', { exceptionReason: reason })),
      ];
      for (const state of states) {
        const { strings: _templates, ...rendered } = pageView(state, issuer, language);
        const texts: string[] = [];
        JSON.stringify(rendered, (_key, value) => (typeof value === 'string' && texts.push(value), value));
        expect(texts.filter((text) => /[{}]/.test(text))).toEqual([]);
      }
    }
  });

  it('writes the window as the language writes dates', () => {
    // Intl puts thin and narrow no-break spaces around the dash: compared as plain spaces.
    const windowText = (min: string, max: string, locale: string) => writtenWindow(min, max, locale).replace(/\s/g, ' ');
    expect(windowText('2026-12-03', '2026-12-05', 'fr')).toBe('jeudi 3 – samedi 5 décembre');
    expect(windowText('2026-12-03', '2026-12-05', 'de')).toBe('Donnerstag, 3. – Samstag, 5. Dezember');
    expect(windowText('2026-12-03', '2026-12-05', 'en-US')).toBe('Thursday, December 3 – Saturday, December 5');
    expect(windowText('2026-12-05', '2026-12-05', 'es')).toBe('sábado, 5 de diciembre');
  });

  it('names the zone of the last update', () => {
    expect(pageView(input('in_transit'), issuer, pageLanguage({ lang: 'de' })).lastUpdated.text).toBe(
      'Zuletzt aktualisiert: 1. Dezember 2026 um 09:00 UTC',
    );
  });
});

describe('the language (docs/tracking-page.md "The page")', () => {
  it('takes ?lang=, then the link locale, then Accept-Language by q, then English', () => {
    expect(pageLanguage({ lang: 'de', linkLocale: 'fr', acceptLanguage: 'it' }).locale).toBe('de');
    expect(pageLanguage({ lang: 'xx', linkLocale: 'fr-CA', acceptLanguage: 'it' }).locale).toBe('fr-CA');
    expect(pageLanguage({ acceptLanguage: 'ja, nl;q=0.5, sv;q=0.8' }).locale).toBe('sv');
    expect(pageLanguage({ acceptLanguage: 'ja' }).locale).toBe('en');
  });

  it('reads Accept-Language most preferred first, dropping q=0 and *', () => {
    expect(acceptedLanguages('fr;q=0.5, de, *;q=0.1, it;q=0')).toEqual(['de', 'fr']);
  });

  it('reads the q parameter in any letter case, as RFC 9110 12.4.2 writes it (its ABNF strings are case-insensitive)', () => {
    expect(acceptedLanguages('en-GB;Q=0.1, de;Q=0.9, fr;Q=0')).toEqual(['de', 'en-GB']);
    expect(pageLanguage({ acceptLanguage: 'en-GB;Q=0.1, de;Q=0.9' }).locale).toBe('de');
  });
});

describe('Accept-Language, as RFC 9110 §12.5.4 reads it', () => {
  const chosen = (acceptLanguage: string) => pageLanguage({ acceptLanguage }).locale;

  it('ignores a member whose weight is not a qvalue (q=2, q=1.5, q=abc, q=00): it neither wins nor counts as q=1', () => {
    expect(chosen('de;q=2, fr;q=0.9')).toBe('fr');
    expect(chosen('de;q=1.5, fr')).toBe('fr');
    expect(chosen('de;q=abc, fr;q=0.9')).toBe('fr');
    expect(chosen('de;q=00, fr;q=0.5')).toBe('fr');
  });

  it('never chooses a language refused with q=0, even when nothing else is acceptable', () => {
    expect(chosen('en;q=0')).not.toBe('en');
    expect(chosen('en;q=0, ja')).not.toBe('en');
    expect(chosen('br, fr;q=0')).not.toMatch(/^fr/);
    expect(chosen('fr-CA;q=0, fr;q=0.5')).toBe('fr');
  });

  it('reads `*` as every language no other member names', () => {
    expect(chosen('*')).toBe('en');
    expect(chosen('en;q=0, *')).not.toBe('en');
    expect(chosen('de;q=0.1, *;q=0.5')).toBe('en');
    expect(chosen('*;q=0, de;q=0.3')).toBe('de');
  });

  it('reads tags in any letter case, and fr-CA as French written in Canada when only fr is offered', () => {
    expect(chosen('FR-ca')).toBe('fr-CA');
    expect(chosen('DE')).toBe('de');
    expect(chosen('ja, fr-CA;q=0.8, en;q=0.5')).toBe('fr-CA');
  });

  it('prefers a language the header names acceptable over a near one it does not (nb is not da)', () => {
    expect(chosen('nb, en;q=0.5')).toBe('en');
    expect(chosen('nb')).toBe('da');
  });

  it('reads a 10 KB header to its end', () => {
    const long = 'ja,'.repeat(3400) + 'de;q=0.2';
    expect(long.length).toBeGreaterThan(10_000);
    expect(chosen(long)).toBe('de');
    expect(chosen('x'.repeat(10_240))).toBe('en');
  });

  it('for any header: a language the page offers, the highest-q acceptable one when one is, never one refused', () => {
    fc.assert(
      fc.property(acceptLanguageHeaders, (header) => {
        const language = pageLanguage({ acceptLanguage: header });
        expect(language.locale.split('-')[0]).toBe(language.language);
        expectChoiceFits(header, language.language);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the steps', () => {
  it('marks the reached step current, and in exception the furthest step an applied event set as done', () => {
    const language = pageLanguage({ lang: 'en' });
    expect(pageView(input('in_transit'), issuer, language).steps.map((s) => s.state)).toEqual(['done', 'current', 'next', 'next']);
    expect(pageView(input('delivered'), issuer, language).steps.map((s) => s.state)).toEqual(['done', 'done', 'done', 'done']);
    const exception = pageView(input('exception'), issuer, language);
    expect(exception.steps.map((s) => s.state)).toEqual(['done', 'done', 'next', 'next']);
    expect(exception.exception?.reason).toBe('Delivery attempt failed');
    expect(exception.action).toEqual({ label: 'Call support: +33142685300', href: 'tel:+33142685300' });
  });
});

describe('the postal-code gate', () => {
  it('compares codes normalised as the prediction does', () => {
    expect(postalCodeMatches(' sw1a-1aa ', 'SW1A 1AA', 'GB')).toBe(true);
    expect(postalCodeMatches('94105-1234', '94105', 'US')).toBe(true);
    expect(postalCodeMatches('75012', '75011', 'FR')).toBe(false);
  });
});

describe('tokens, colours and expiry', () => {
  it('makes 43-character base64url tokens and matches them against their stored hash', () => {
    const { token, hash } = newTrackingToken();
    expect(token).toMatch(TOKEN_PATTERN);
    expect(tokenMatches(hash, token)).toBe(true);
    expect(tokenMatches(hash, newTrackingToken().token)).toBe(false);
  });

  it('takes an accent colour only at 4.5:1 with white text or more', () => {
    expect(contrastWithWhite('#767676')).toBeGreaterThanOrEqual(4.5);
    expect(trackingPageBrandingPatch.safeParse({ accent_color: '#767676' }).success).toBe(true);
    expect(trackingPageBrandingPatch.safeParse({ accent_color: '#777777' }).success).toBe(false);
  });

  it('bounds expires_at to the future and 180 days', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(linkExpiry(undefined, now)).toEqual({ expiresAt: new Date('2026-03-02T00:00:00Z') });
    expect(linkExpiry('2026-06-30T00:00:00Z', now)).toEqual({ expiresAt: new Date('2026-06-30T00:00:00Z') });
    expect(linkExpiry('2026-07-01T00:00:01Z', now)).toEqual({ problem: expect.stringMatching(/^expires_at: /) });
    expect(linkExpiry('2026-01-01T00:00:00Z', now)).toEqual({ problem: expect.stringMatching(/^expires_at: /) });
  });
});
