// The message catalogs, one per supported language (domain/locale.ts picks which). Each catalog
// holds ICU MessageFormat strings (intl-messageformat); tests render every status × confidence ×
// exception reason in every language, so a missing or broken message fails the suite.
//
// Arguments the messages receive:
// - `when`: { shape: 'single' | 'sameMonth' | 'crossMonth', order: 'dayFirst' | 'monthFirst',
//   minDay, maxDay (numbers), minMonth, maxMonth (month names from Intl.DateTimeFormat for the locale) };
// - every status message: { confidence: 'High' | 'Medium' | 'Low', when: the rendered `when` phrase }.
// Typographic apostrophes (’) are used on purpose: a straight ' is ICU's quoting character.
import type { DispatchStatus, ExceptionReason } from '../schemas.js';
import type { SupportedLocale } from '../locale.js';
import { da } from './da.js';
import { de } from './de.js';
import { en } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { it } from './it.js';
import { nl } from './nl.js';
import { pl } from './pl.js';
import { pt } from './pt.js';
import { sv } from './sv.js';

export interface Catalog {
  /** The delivery window as a phrase that completes "It should arrive …" / "delivered …". */
  when: string;
  dispatched: string;
  in_transit: string;
  out_for_delivery: string;
  delivered: string;
  /** One message per reason: each says what happened and asks the cardholder to contact support. */
  exception: Record<ExceptionReason, string>;
  /** The cardholder's tracking page (api/tracking-page/); `{phone}` and `{time}` are its only arguments. */
  page: PageCatalog;
}

export interface PageCatalog {
  title: string;
  statusHeading: string;
  /** Visually hidden state of a step, read by screen readers. */
  stepDone: string;
  stepCurrent: string;
  stepNext: string;
  steps: Record<Exclude<DispatchStatus, 'exception'>, string>;
  exceptionHeading: string;
  /** The exception reason in a few words (the message of ui_suggestion says the rest). */
  reasons: Record<ExceptionReason, string>;
  windowHeading: string;
  deliveredHeading: string;
  activate: string;
  contactSupport: string;
  callSupport: string;
  timelineHeading: string;
  timelineEmpty: string;
  lastUpdated: string;
  languages: string;
  gateIntro: string;
  postalCode: string;
  gateSubmit: string;
  gateWrong: string;
  notFoundTitle: string;
  notFoundText: string;
  goneTitle: string;
  goneText: string;
  limitedTitle: string;
  limitedText: string;
  errorTitle: string;
  errorText: string;
}

export const CATALOGS: Readonly<Record<SupportedLocale, Catalog>> = { en, fr, de, es, it, nl, pt, pl, sv, da };
