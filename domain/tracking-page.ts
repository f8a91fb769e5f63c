// What the cardholder's tracking page says (docs/tracking-page.md "The
// page"), as plain values for api/tracking-page/render.ts to put into HTML: the language the page is
// written in (`?lang=`, the link's locale, Accept-Language, English), the steps, the delivery window
// as that language writes dates, recommended_message (domain/messages.ts, the same catalogues), the
// action, the timeline of the carrier events that changed the status, and when it last changed.
// Pure: Intl and the catalogues only. It never receives the postal code, the country (beyond the
// message's own locale fallback), the dispatch id or an event's location, so it cannot show them.
import { createHash, timingSafeEqual } from 'node:crypto';
import { match } from '@formatjs/intl-localematcher';
import { IntlMessageFormat } from 'intl-messageformat';
import { LRUCache } from 'lru-cache';
import { DEFAULT_LOCALE, SUPPORTED_LOCALES, type SupportedLocale } from './locale.js';
import type { PageCatalog } from './locales/catalog.js';
import { CATALOGS } from './locales/index.js';
import { renderSuggestion } from './messages.js';
import { normalisePostalCode } from './prediction-model.js';
import { recommendedActionFor } from './state-machine.js';
import type { ConfidenceLevel, DispatchStatus, ExceptionReason } from './vocabulary.js';
import type { TrackingPageBranding } from './tracking-links.js';

export const FORWARD_STEPS = ['dispatched', 'in_transit', 'out_for_delivery', 'delivered'] as const;
type ForwardStatus = (typeof FORWARD_STEPS)[number];

// ---------- language ----------

export interface PageLanguage {
  language: SupportedLocale;
  /** BCP 47 tag the dates are written in: the language with the region it was asked for, if any. */
  locale: string;
  dir: 'ltr' | 'rtl';
}

/** Languages written right to left: none of the ten today, but the markup says `dir` from this. */
const RIGHT_TO_LEFT = new Set(['ar', 'he', 'fa', 'ur']);

function fromTag(tag: string): PageLanguage | undefined {
  let parsed: Intl.Locale;
  try {
    parsed = new Intl.Locale(tag);
  } catch {
    return undefined;
  }
  const matched = match([parsed.baseName], SUPPORTED_LOCALES, 'und') as SupportedLocale | 'und';
  if (matched === 'und') return undefined;
  const locale = parsed.region !== undefined ? `${matched}-${parsed.region}` : matched;
  return { language: matched, locale, dir: RIGHT_TO_LEFT.has(matched) ? 'rtl' : 'ltr' };
}

/** A member of Accept-Language: a language range (RFC 4647 §2.1) with at most a weight (RFC 9110 §12.4.2, any letter case). */
const ACCEPT_MEMBER = /^[ \t]*([a-z]{1,8}(?:-[a-z0-9]{1,8})*|\*)[ \t]*(?:;[ \t]*q=(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?))?[ \t]*$/i;
const OFFERED: ReadonlySet<string> = new Set(SUPPORTED_LOCALES);
/** CLDR matching of the ranges no offered language answers: the first this many, each this long at most. */
const MAX_NEAR_RANGES = 20;
const MAX_TAG_LENGTH = 35;
/** Longer candidates (a 10 KB header) are negotiated each time rather than kept. */
const MAX_CACHED_KEY_LENGTH = 256;

interface AcceptRange {
  range: string;
  /** The range's language subtag in lower case (`*` for `*`). */
  language: string;
  q: number;
}

/**
 * The members of an Accept-Language header, most preferred first (equal weights in the header's
 * order). A member that is not a language range with at most a valid weight (q=2, q=1.5, q=abc,
 * another parameter) is ignored: it neither wins nor counts as q=1.
 */
function acceptRanges(header: string): AcceptRange[] {
  const ranges: Array<AcceptRange & { index: number }> = [];
  for (const member of header.split(',')) {
    const parsed = ACCEPT_MEMBER.exec(member);
    if (!parsed) continue;
    const q = parsed[2] === undefined ? 1 : Number(parsed[2]);
    ranges.push({ range: parsed[1], language: parsed[1].split('-')[0].toLowerCase(), q, index: ranges.length });
  }
  return ranges.sort((a, b) => b.q - a.q || a.index - b.index);
}

/** The ranges of an Accept-Language header that accept something, most preferred first (q=0, `*` and malformed members dropped). */
export function acceptedLanguages(header: string | undefined): string[] {
  return acceptRanges(header ?? '')
    .filter((entry) => entry.q > 0 && entry.range !== '*')
    .map((entry) => entry.range);
}

/** `language` written with the region `range` names, if any (`fr-CA` → dates as Canada writes them). */
function withRegion(language: SupportedLocale, range: string): PageLanguage {
  let region: string | undefined;
  try {
    region = range.length <= MAX_TAG_LENGTH ? new Intl.Locale(range).region : undefined;
  } catch {
    region = undefined;
  }
  return { language, locale: region ? `${language}-${region}` : language, dir: RIGHT_TO_LEFT.has(language) ? 'rtl' : 'ltr' };
}

/**
 * RFC 9110 §12.5.4: an offered language's weight is the highest of the ranges naming it (`fr-CA`
 * names `fr`, as RFC 4647 lookup falls back to it), else that of `*` ("every tag not matched by any
 * other range"); the page is written in the most preferred acceptable one (q > 0). When none is, a
 * range CLDR matches to a near language (`nb` → Danish, `br` → French) decides, then English, then
 * the first offered: never a language the header refuses with q=0, unless it refuses them all.
 */
function fromAcceptLanguage(header: string): PageLanguage {
  const ranges = acceptRanges(header);
  const named = new Map<string, number>();
  let any: number | undefined;
  for (const { language, q } of ranges) {
    if (language === '*') any = Math.max(any ?? 0, q);
    else if (OFFERED.has(language)) named.set(language, Math.max(named.get(language) ?? 0, q));
  }
  for (const { range, language, q } of ranges) {
    if (q === 0) break; // most preferred first: the rest refuse
    if (OFFERED.has(language)) return withRegion(language as SupportedLocale, range);
    const unnamed = language === '*' ? SUPPORTED_LOCALES.find((offered) => !named.has(offered)) : undefined;
    if (unnamed) return withRegion(unnamed, unnamed);
  }
  const refused = (language: SupportedLocale) => (named.get(language) ?? any) === 0;
  const near = ranges.filter((entry) => entry.q > 0 && entry.language !== '*' && entry.range.length <= MAX_TAG_LENGTH);
  for (const { range } of near.slice(0, MAX_NEAR_RANGES)) {
    const found = fromTag(range);
    if (found && !refused(found.language)) return found;
  }
  const fallback = [DEFAULT_LOCALE, ...SUPPORTED_LOCALES].find((language) => !refused(language)) ?? DEFAULT_LOCALE;
  return withRegion(fallback, fallback);
}

/** docs/tracking-page.md "The page": the first supported of `?lang=`, the link's locale, Accept-Language, English. */
export function pageLanguage(candidates: { lang?: string; linkLocale?: string | null; acceptLanguage?: string }): PageLanguage {
  // CLDR matching costs tens of µs and the same few combinations come again and again (bench/tracking-page).
  const key = `${candidates.lang ?? ''}\u0000${candidates.linkLocale ?? ''}\u0000${candidates.acceptLanguage ?? ''}`;
  if (key.length > MAX_CACHED_KEY_LENGTH) return negotiatePageLanguage(candidates);
  let language = languages.get(key);
  if (!language) {
    language = negotiatePageLanguage(candidates);
    languages.set(key, language);
  }
  return language;
}

const languages = new LRUCache<string, PageLanguage>({ max: 10_000 });

function negotiatePageLanguage(candidates: { lang?: string; linkLocale?: string | null; acceptLanguage?: string }): PageLanguage {
  for (const tag of [candidates.lang, candidates.linkLocale ?? undefined]) {
    if (tag === undefined || tag.length > MAX_TAG_LENGTH) continue;
    const found = fromTag(tag);
    if (found) return found;
  }
  return fromAcceptLanguage(candidates.acceptLanguage ?? '');
}

// ---------- text ----------

const compiled = new Map<string, IntlMessageFormat>();
const formatters = new Map<string, Intl.DateTimeFormat>();

/** A page string with its arguments (ICU MessageFormat, as domain/messages.ts renders). */
function text(template: string, locale: string, values?: Record<string, string>): string {
  if (!values) return template;
  const key = `${locale}\u0000${template}`;
  let message = compiled.get(key);
  if (!message) {
    message = new IntlMessageFormat(template, locale);
    compiled.set(key, message);
  }
  return String(message.format(values));
}

function dateFormat(locale: string, kind: 'day' | 'dayShort' | 'moment'): Intl.DateTimeFormat {
  const key = `${locale}\u0000${kind}`;
  let format = formatters.get(key);
  if (!format) {
    const options: Intl.DateTimeFormatOptions =
      kind === 'day'
        ? { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' }
        : kind === 'dayShort'
          ? { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }
          : { day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC', timeZoneName: 'short' };
    format = new Intl.DateTimeFormat(locale, options);
    formatters.set(key, format);
  }
  return format;
}

const dayOf = (date: string) => new Date(`${date}T00:00:00Z`);

/** The delivery window as calendar dates the way `locale` writes them: one day, or a range. */
export function windowText(min: string, max: string, locale: string): string {
  const format = dateFormat(locale, 'day');
  return min === max ? format.format(dayOf(min)) : format.formatRange(dayOf(min), dayOf(max));
}

// Intl formatting costs a few µs a call and a page makes several; the same dates recur across
// cards, so the written forms are kept (bench/tracking-page measures the page's cost).
const written = new LRUCache<string, string>({ max: 20_000 });

function memo(key: string, make: () => string): string {
  let value = written.get(key);
  if (value === undefined) {
    value = make();
    written.set(key, value);
  }
  return value;
}

/** Language names, each in its own language ("Deutsch", "Français"), for the language links. */
const OWN_NAMES: Readonly<Record<SupportedLocale, string>> = Object.fromEntries(
  SUPPORTED_LOCALES.map((language) => {
    const name = new Intl.DisplayNames([language], { type: 'language' }).of(language) ?? language;
    return [language, name.charAt(0).toLocaleUpperCase(language) + name.slice(1)];
  }),
) as Record<SupportedLocale, string>;

// ---------- the page ----------

export interface PageEvent {
  status: DispatchStatus;
  occurredAt: Date;
  reason: ExceptionReason | null;
}

export interface PageInput {
  status: DispatchStatus;
  windowMin: string;
  windowMax: string;
  confidence: ConfidenceLevel;
  exceptionReason: ExceptionReason | null;
  /** The dispatch's registered locale and country: only recommended_message's own fallback uses them. */
  registeredLocale: string | null;
  countryCode: string;
  /** The carrier events with effect `applied`, in any order. */
  events: PageEvent[];
  updatedAt: Date;
}

export interface Issuer {
  name: string;
  branding: TrackingPageBranding | null;
}

export type StepState = 'done' | 'current' | 'next';

export interface PageView {
  language: PageLanguage;
  strings: PageCatalog;
  issuerName: string;
  accentColor: string | null;
  steps: Array<{ label: string; state: StepState; stateText: string }>;
  exception?: { heading: string; reason: string };
  window: { heading: string; text: string };
  message: string;
  action?: { label: string; href: string };
  timeline: Array<{ label: string; date: string; datetime: string }>;
  lastUpdated: { text: string; datetime: string };
  languages: Array<{ language: SupportedLocale; name: string; current: boolean }>;
}

/** The name the page shows: the branding's display name, else the issuer's name. */
export const issuerDisplayName = (issuer: Issuer) => issuer.branding?.display_name ?? issuer.name;

/** The support contact a page offers: the support URL, else the phone as `tel:`; none without branding. */
export function supportAction(issuer: Issuer, strings: PageCatalog, locale: string): { label: string; href: string } | undefined {
  const branding = issuer.branding;
  if (branding?.support_url) return { label: strings.contactSupport, href: branding.support_url };
  if (branding?.support_phone) return { label: text(strings.callSupport, locale, { phone: branding.support_phone }), href: `tel:${branding.support_phone}` }; // prettier-ignore
  return undefined;
}

export function languageLinks(current: SupportedLocale): PageView['languages'] {
  return SUPPORTED_LOCALES.map((language) => ({ language, name: OWN_NAMES[language], current: language === current }));
}

/** The step the card has reached: its status, or in exception the furthest forward status an applied event set. */
function reachedStep(input: PageInput): ForwardStatus | undefined {
  if (input.status !== 'exception') return input.status;
  let reached: ForwardStatus | undefined;
  for (const event of input.events) {
    const index = FORWARD_STEPS.indexOf(event.status as ForwardStatus);
    if (index >= 0 && (reached === undefined || index > FORWARD_STEPS.indexOf(reached))) reached = FORWARD_STEPS[index];
  }
  return reached ?? 'dispatched';
}

/**
 * recommended_message in the page's locale (always supported, so the registered locale and the country
 * never decide), memoised: the same status, window and confidence come for many cards.
 */
function suggestionFor(input: PageInput, locale: string): string {
  const key = `${locale}|${input.status}|${input.windowMin}|${input.windowMax}|${input.confidence}|${input.exceptionReason ?? ''}`;
  let message = messages.get(key);
  if (message === undefined) {
    message = renderSuggestion({
      status: input.status,
      window: { min: input.windowMin, max: input.windowMax },
      confidence: input.confidence,
      exceptionReason: input.exceptionReason ?? undefined,
      requestedLocale: locale,
      registeredLocale: input.registeredLocale ?? undefined,
      countryCode: input.countryCode,
    }).recommended_message;
    messages.set(key, message);
  }
  return message;
}

const messages = new LRUCache<string, string>({ max: 10_000 });

export function pageView(input: PageInput, issuer: Issuer, language: PageLanguage): PageView {
  const strings = CATALOGS[language.language].page;
  const { locale } = language;
  const reached = reachedStep(input)!;
  const reachedIndex = FORWARD_STEPS.indexOf(reached);
  const inException = input.status === 'exception';
  const steps = FORWARD_STEPS.map((step, index) => {
    const state: StepState = index < reachedIndex || (index === reachedIndex && (inException || step === 'delivered')) ? 'done' : index === reachedIndex ? 'current' : 'next'; // prettier-ignore
    return { label: strings.steps[step], state, stateText: state === 'done' ? strings.stepDone : state === 'current' ? strings.stepCurrent : strings.stepNext }; // prettier-ignore
  });
  const message = suggestionFor(input, locale);
  const action = recommendedActionFor(input.status);
  const delivered = input.status === 'delivered';
  const timeline = [...input.events]
    .sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime())
    .map((event) => ({
      label: event.status === 'exception' ? strings.reasons[event.reason ?? 'other'] : strings.steps[event.status],
      date: memo(`d|${locale}|${event.occurredAt.toISOString().slice(0, 10)}`, () =>
        dateFormat(locale, 'dayShort').format(event.occurredAt),
      ),
      datetime: event.occurredAt.toISOString(),
    }));
  return {
    language,
    strings,
    issuerName: issuerDisplayName(issuer),
    accentColor: issuer.branding?.accent_color ?? null,
    steps,
    exception: inException ? { heading: strings.exceptionHeading, reason: strings.reasons[input.exceptionReason ?? 'other'] } : undefined,
    window: delivered
      ? { heading: strings.deliveredHeading, text: memo(`w|${locale}|${input.windowMax}`, () => windowText(input.windowMax, input.windowMax, locale)) } // prettier-ignore
      : { heading: strings.windowHeading, text: memo(`w|${locale}|${input.windowMin}|${input.windowMax}`, () => windowText(input.windowMin, input.windowMax, locale)) }, // prettier-ignore
    message,
    action:
      action === 'Activate' && issuer.branding?.activation_url
        ? { label: strings.activate, href: issuer.branding.activation_url }
        : action === 'ContactSupport'
          ? supportAction(issuer, strings, locale)
          : undefined,
    timeline,
    lastUpdated: {
      text: memo(`m|${locale}|${input.updatedAt.toISOString().slice(0, 16)}`, () =>
        text(strings.lastUpdated, locale, { time: dateFormat(locale, 'moment').format(input.updatedAt) }),
      ),
      datetime: input.updatedAt.toISOString(),
    },
    languages: languageLinks(language.language),
  };
}

// ---------- the postal-code gate ----------

/** Whether the code typed matches the destination's, both normalised as the prediction does; constant time. */
export function postalCodeMatches(typed: string, destination: string, countryCode: string): boolean {
  const digest = (code: string) => createHash('sha256').update(normalisePostalCode(code, countryCode), 'utf8').digest();
  return timingSafeEqual(digest(typed), digest(destination));
}
