// Which language a ui_suggestion is written in (spec: "the cardholder's inferred locale").
// Candidates, first usable one wins: the request's `?locale=`, the locale given at registration,
// the main language of the destination country, then English. A candidate is usable when CLDR's
// language matching (@formatjs/intl-localematcher, "best fit") maps it to a catalog we have, so
// `fr-CA` reads French, Breton (`br`) reads French, Catalan (`ca`) Spanish, Norwegian Bokmål (`nb`)
// Danish and Luxembourgish (`lb`) German, as CLDR suggests for their speakers.
//
// The tag returned (ui_suggestion.locale) names the catalog language plus the region it was asked
// for, because the region decides how dates read: `en-GB` → "24 November", `en-US` → "November 24".
// - from a requested or registered tag: its language and region only (`fr-CA` → `fr-CA`,
//   `en-u-ca-buddhist` → `en`: extensions, scripts and variants are dropped, so a Unicode extension
//   cannot switch the calendar or numbering system of the message);
// - from the destination country: the language with that country (FR → `fr-FR`, GB → `en-GB`);
// - the last resort is plain `en`.
import { match } from '@formatjs/intl-localematcher';

export const SUPPORTED_LOCALES = ['en', 'fr', 'de', 'es', 'it', 'nl', 'pt', 'pl', 'sv', 'da'] as const;
export type SupportedLocale = (typeof SUPPORTED_LOCALES)[number];
export const DEFAULT_LOCALE: SupportedLocale = 'en';

/**
 * Main language of a destination country, used when the cardholder's language is unknown. Listed
 * even when we have no catalog (those fall through CLDR matching, e.g. NO → nb → Danish, or to
 * English). Multilingual countries get their majority language: BE → nl (Dutch is spoken by about
 * 60 %), CH → de, CA → en (Quebec cardholders get French through their registered locale), LU → fr
 * (the usual written language of administration and business there).
 */
export const COUNTRY_LANGUAGE: Readonly<Record<string, string>> = {
  AT: 'de',
  AU: 'en',
  BE: 'nl',
  BG: 'bg',
  BR: 'pt',
  CA: 'en',
  CH: 'de',
  CY: 'el',
  CZ: 'cs',
  DE: 'de',
  DK: 'da',
  EE: 'et',
  ES: 'es',
  FI: 'fi',
  GB: 'en',
  GR: 'el',
  HR: 'hr',
  HU: 'hu',
  IE: 'en',
  IN: 'en',
  IT: 'it',
  JP: 'ja',
  LT: 'lt',
  LU: 'fr',
  LV: 'lv',
  MT: 'en',
  MX: 'es',
  NL: 'nl',
  NO: 'nb',
  NZ: 'en',
  PL: 'pl',
  PT: 'pt',
  RO: 'ro',
  SE: 'sv',
  SG: 'en',
  SI: 'sl',
  SK: 'sk',
  US: 'en',
  // German, Italian, Dutch, Swedish and Danish outside their main country.
  LI: 'de',
  SM: 'it',
  VA: 'it',
  SR: 'nl',
  AW: 'nl',
  CW: 'nl',
  SX: 'nl',
  AX: 'sv',
  FO: 'fo',
  GL: 'kl',
  // Spanish-speaking Americas and Equatorial Guinea; Andorra's Catalan reads Spanish by CLDR.
  AD: 'ca',
  AR: 'es',
  BO: 'es',
  CL: 'es',
  CO: 'es',
  CR: 'es',
  CU: 'es',
  DO: 'es',
  EC: 'es',
  GQ: 'es',
  GT: 'es',
  HN: 'es',
  NI: 'es',
  PA: 'es',
  PE: 'es',
  PR: 'es',
  PY: 'es',
  SV: 'es',
  UY: 'es',
  VE: 'es',
  // Portuguese-speaking Africa and Asia.
  AO: 'pt',
  CV: 'pt',
  GW: 'pt',
  MZ: 'pt',
  ST: 'pt',
  TL: 'pt',
  // French-speaking: France's overseas regions and territories, Monaco, and French-official states.
  FR: 'fr',
  MC: 'fr',
  GP: 'fr',
  MQ: 'fr',
  GF: 'fr',
  RE: 'fr',
  YT: 'fr',
  PM: 'fr',
  BL: 'fr',
  MF: 'fr',
  NC: 'fr',
  PF: 'fr',
  WF: 'fr',
  SN: 'fr',
  CI: 'fr',
  ML: 'fr',
  BF: 'fr',
  NE: 'fr',
  TG: 'fr',
  BJ: 'fr',
  GA: 'fr',
  CG: 'fr',
  CD: 'fr',
  GN: 'fr',
  MG: 'fr',
  HT: 'fr',
};

export interface LocaleCandidates {
  requestedLocale?: string;
  registeredLocale?: string;
  countryCode: string;
}

export interface NegotiatedLocale {
  /** The catalog the message is rendered from. */
  language: SupportedLocale;
  /** BCP 47 tag reported as ui_suggestion.locale and used to format dates. */
  locale: string;
}

const NO_MATCH = 'und';

export function negotiateLocale({ requestedLocale, registeredLocale, countryCode }: LocaleCandidates): NegotiatedLocale {
  for (const tag of [requestedLocale, registeredLocale]) {
    if (tag === undefined) continue;
    const found = fromTag(tag);
    if (found) return found;
  }
  const country = countryCode.toUpperCase();
  const countryLanguage = COUNTRY_LANGUAGE[country];
  if (countryLanguage !== undefined) {
    const found = fromTag(`${countryLanguage}-${country}`);
    if (found) return found;
  }
  return { language: DEFAULT_LOCALE, locale: DEFAULT_LOCALE };
}

function fromTag(tag: string): NegotiatedLocale | undefined {
  let parsed: Intl.Locale;
  try {
    parsed = new Intl.Locale(tag);
  } catch {
    return undefined; // not BCP 47: try the next candidate rather than fail the whole status record
  }
  const matched = match([parsed.baseName], SUPPORTED_LOCALES, NO_MATCH) as SupportedLocale | typeof NO_MATCH;
  if (matched === NO_MATCH) return undefined;
  const locale = parsed.region !== undefined ? `${matched}-${parsed.region}` : matched;
  return { language: matched, locale };
}
