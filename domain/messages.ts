// UI suggestion rendering (docs/predictions.md "Messages"): a plain-text, ready-to-display message about the
// delivery timeline in the cardholder's language, calibrated to the confidence level, plus the
// recommended action. Pure: catalogs are ICU MessageFormat (domain/locales/), dates come from
// Intl.DateTimeFormat for the negotiated locale (domain/locale.ts).
import { IntlMessageFormat } from 'intl-messageformat';
import { recommendedActionFor } from './state-machine.js';
import type { ConfidenceLevel, DispatchStatus, ExceptionReason, RecommendedAction } from './vocabulary.js';
import { negotiateLocale } from './locale.js';
import { CATALOGS } from './locales/index.js';

export { SUPPORTED_LOCALES } from './locale.js';

export interface SuggestionInput {
  status: DispatchStatus;
  window: { min: string; max: string };
  confidence: ConfidenceLevel;
  exceptionReason?: ExceptionReason;
  /** `?locale=` of the request, if any (already a canonical BCP 47 tag). */
  requestedLocale?: string;
  /** The registration's `locale`, if any. */
  registeredLocale?: string;
  /** Destination country, ISO alpha-2: its main language is the next fallback. */
  countryCode: string;
}

export interface UiSuggestion {
  locale: string;
  recommended_message: string;
  recommended_action: RecommendedAction;
}

export function renderSuggestion(input: SuggestionInput): UiSuggestion {
  const { language, locale } = negotiateLocale(input);
  const catalog = CATALOGS[language];
  const when = format(catalog.when, locale, windowArguments(input.window, locale));
  const template = input.status === 'exception' ? catalog.exception[input.exceptionReason ?? 'other'] : catalog[input.status];
  return {
    locale,
    recommended_message: format(template, locale, { confidence: input.confidence, when }),
    recommended_action: recommendedActionFor(input.status),
  };
}

/** Compiled messages, per locale and template: parsing ICU is the costly part of rendering. */
const compiled = new Map<string, IntlMessageFormat>();

function format(template: string, locale: string, values: Record<string, string | number>): string {
  const key = `${locale}\u0000${template}`;
  let message = compiled.get(key);
  if (!message) {
    message = new IntlMessageFormat(template, locale);
    compiled.set(key, message);
  }
  return String(message.format(values));
}

const dateFormats = new Map<string, Intl.DateTimeFormat>();

/** Day number and month name of a 'YYYY-MM-DD' date, and whether the locale writes the day first. */
function dayAndMonth(date: string, locale: string): { day: number; month: string; dayFirst: boolean } {
  let dateFormat = dateFormats.get(locale);
  if (!dateFormat) {
    dateFormat = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'long', timeZone: 'UTC' });
    dateFormats.set(locale, dateFormat);
  }
  const parts = dateFormat.formatToParts(new Date(`${date}T00:00:00Z`));
  const month = parts.find((part) => part.type === 'month')?.value ?? '';
  const dayFirst = parts.findIndex((part) => part.type === 'day') < parts.findIndex((part) => part.type === 'month');
  // The day is passed as a number so catalogs can pick forms such as French "1er".
  return { day: Number(date.slice(8, 10)), month, dayFirst };
}

function windowArguments(window: SuggestionInput['window'], locale: string): Record<string, string | number> {
  const min = dayAndMonth(window.min, locale);
  const max = dayAndMonth(window.max, locale);
  const shape = window.min === window.max ? 'single' : window.min.slice(0, 7) === window.max.slice(0, 7) ? 'sameMonth' : 'crossMonth';
  return {
    shape,
    order: max.dayFirst ? 'dayFirst' : 'monthFirst',
    minDay: min.day,
    maxDay: max.day,
    minMonth: min.month,
    maxMonth: max.month,
  };
}
