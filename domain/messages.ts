// UI suggestion rendering. PLACEHOLDER SIGNATURE — being implemented.
import type { ConfidenceLevel, DispatchStatus, ExceptionReason, RecommendedAction } from './schemas.js';

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
  throw new Error('not implemented');
}
