// Delivery window prediction (docs/predictions.md), foundation version.
// Pure: the caller passes `today`; nothing here reads a clock, a database or Temporal.
//
// How a window is made today:
// 1. A baseline transit time per destination country, in business days (TRANSIT_BUSINESS_DAYS),
//    counted from the first business day on or after the dispatch date.
// 2. Confidence comes from the amount of delivery history for the destination postal code. The
//    foundation has none (HISTORY_COUNT_TODAY = 0), so every in-flight window is `Low`, and a `Low`
//    window is wider than usual (docs/predictions.md "Levels"): it gets LOW_CONFIDENCE_EXTRA_DAYS more at the late end.
// 3. The status narrows or moves the window (out for delivery → today; delivered → the date;
//    exception → a wider window from today), and a window never lies in the past.
// The history-based engine (postal code → prefix → country, carrier conditions, holidays,
// calibrated coverage) replaces steps 1 and 2 and keeps this signature.
import type { ConfidenceLevel, DispatchStatus, ExceptionReason } from './vocabulary.js';
import { addBusinessDays, businessDayOnOrAfter, businessDaysBetween, laterDate, utcDateOf } from './calendar.js';

export interface Prediction {
  window: { min: string; max: string };
  confidence: ConfidenceLevel;
}

export interface PredictionInput {
  /** ISO 8601 timestamp of dispatch. */
  dispatchDate: string;
  destination: { postal_code: string; country_code: string };
  /** The dispatch's status now (the state machine's CurrentStatus, of which a prediction reads only this). */
  state: { status: DispatchStatus; statusSince: string; exceptionReason?: ExceptionReason };
  /** The date the prediction is made, YYYY-MM-DD (UTC). */
  today: string;
}

/** [min, max] business days from dispatch to delivery. */
type TransitRange = readonly [number, number];

/**
 * Typical transit of standard letter post (how cards travel) to an address in the country, from
 * the national operators' published delivery targets, rounded outwards. A starting point until
 * real history replaces it, not a promise.
 */
export const TRANSIT_BUSINESS_DAYS: Readonly<Record<string, TransitRange>> = {
  // Europe
  AT: [1, 3],
  BE: [1, 3],
  BG: [3, 7],
  CH: [1, 3],
  CY: [2, 5],
  CZ: [1, 4],
  DE: [1, 3],
  DK: [2, 5],
  EE: [2, 4],
  ES: [2, 5],
  FI: [2, 5],
  FR: [2, 4],
  GB: [1, 3],
  GR: [3, 7],
  HR: [2, 5],
  HU: [2, 4],
  IE: [1, 3],
  IT: [3, 6],
  LT: [2, 4],
  LU: [1, 3],
  LV: [2, 4],
  MT: [2, 4],
  NL: [1, 3],
  NO: [2, 5],
  PL: [2, 5],
  PT: [2, 5],
  RO: [3, 7],
  SE: [2, 4],
  SI: [1, 3],
  SK: [2, 4],
  // Elsewhere
  AU: [3, 6],
  BR: [3, 8],
  CA: [2, 6],
  HK: [1, 3],
  IN: [3, 7],
  JP: [1, 3],
  MX: [4, 10],
  NZ: [2, 5],
  SG: [1, 3],
  US: [2, 5],
};

/** Countries absent from the table: a deliberately wide range, since nothing is known about them. */
export const DEFAULT_TRANSIT_BUSINESS_DAYS: TransitRange = [5, 10];

/**
 * Business days after the next business day by which an exception moves the window, per reason:
 * a failed attempt is usually retried or collected within days; a card that is lost, damaged or
 * returned needs a replacement, so its window is the longest.
 */
const EXCEPTION_BUSINESS_DAYS: Readonly<Record<ExceptionReason, TransitRange>> = {
  failed_attempt: [1, 3],
  postal_delay: [2, 5],
  address_issue: [3, 5],
  damaged: [3, 7],
  lost: [3, 7],
  returned: [3, 7],
  other: [3, 5],
  // The service's own reason: long overdue, as good as lost until the carrier says otherwise.
  overdue: [3, 7],
};

/** Deliveries to a postal code needed before a window earns Medium, then High confidence. */
const MEDIUM_CONFIDENCE_MIN_HISTORY = 10;
const HIGH_CONFIDENCE_MIN_HISTORY = 50;

/** Extra business days at the late end of a window, by confidence ("wider than usual" when Low). */
const EXTRA_DAYS_BY_CONFIDENCE: Readonly<Record<ConfidenceLevel, number>> = { High: 0, Medium: 1, Low: 2 };
export const LOW_CONFIDENCE_EXTRA_DAYS = EXTRA_DAYS_BY_CONFIDENCE.Low;

/** Delivered dispatches known for a postal code. The foundation keeps no history yet. */
const HISTORY_COUNT_TODAY = 0;

export function confidenceFromHistory(historyCount: number): ConfidenceLevel {
  if (historyCount >= HIGH_CONFIDENCE_MIN_HISTORY) return 'High';
  if (historyCount >= MEDIUM_CONFIDENCE_MIN_HISTORY) return 'Medium';
  return 'Low';
}

export function transitRangeFor(countryCode: string): TransitRange {
  return TRANSIT_BUSINESS_DAYS[countryCode.toUpperCase()] ?? DEFAULT_TRANSIT_BUSINESS_DAYS;
}

export function predict(input: PredictionInput): Prediction {
  const { state, today } = input;
  // Business days are the destination country's: weekends and its national public holidays.
  const country = input.destination.country_code;
  switch (state.status) {
    case 'delivered': {
      const deliveredOn = utcDateOf(state.statusSince);
      return { window: { min: deliveredOn, max: deliveredOn }, confidence: 'High' };
    }
    case 'out_for_delivery': {
      // The carrier's own scan, not history, says "today": the window is one day and sure.
      // A scan from an earlier day that has not become a delivery points at the next chance.
      const day = utcDateOf(state.statusSince) === today ? today : businessDayOnOrAfter(today, country);
      return { window: { min: day, max: day }, confidence: 'High' };
    }
    case 'exception': {
      const [minDays, maxDays] = EXCEPTION_BUSINESS_DAYS[state.exceptionReason ?? 'other'];
      const start = businessDayOnOrAfter(today, country);
      const min = addBusinessDays(start, minDays, country);
      // An exception never brings the expected arrival forward.
      const max = laterDate(addBusinessDays(start, maxDays, country), transitWindow(input, 'Low').max);
      return { window: { min, max }, confidence: 'Low' };
    }
    case 'dispatched':
    case 'in_transit': {
      const confidence = confidenceFromHistory(HISTORY_COUNT_TODAY);
      return { window: notInThePast(transitWindow(input, confidence), today, country), confidence };
    }
  }
}

/** The window the transit table gives from the dispatch date, widened for the confidence. */
function transitWindow(input: PredictionInput, confidence: ConfidenceLevel): Prediction['window'] {
  const country = input.destination.country_code;
  const [minDays, maxDays] = transitRangeFor(country);
  // Mail handed over on a weekend or holiday starts moving on the next business day.
  const start = businessDayOnOrAfter(utcDateOf(input.dispatchDate), country);
  return {
    min: addBusinessDays(start, minDays, country),
    max: addBusinessDays(start, maxDays + EXTRA_DAYS_BY_CONFIDENCE[confidence], country),
  };
}

/**
 * A card not yet delivered cannot arrive before today. Once today passes `min`, the window starts
 * today (or the next business day); once it passes `max`, the whole window slides and keeps its
 * width, since a late card is still expected, just not on the original dates.
 */
export function notInThePast(window: Prediction['window'], today: string, country: string): Prediction['window'] {
  if (window.min >= today) return window;
  const min = businessDayOnOrAfter(today, country);
  if (window.max >= min) return { min, max: window.max };
  return { min, max: addBusinessDays(min, businessDaysBetween(window.min, window.max, country), country) };
}
