// Builds the dispatch status record (GET /v1/status/{id} and webhook `data`) from the
// pieces the dispatch workflow holds. Exactly the contract's fields, in its order (docs/http-contract.md
// "GET /v1/status/{id}"), so the JSON reads like its table; `statusRecord` in ./dispatch-schemas.ts is the contract it must satisfy.
import type { StatusRecord } from './dispatch-schemas.js';
import { normaliseTimestamp } from './state-machine.js';
import type { DispatchStatus } from './vocabulary.js';
import type { Prediction } from './prediction.js';
import type { UiSuggestion } from './messages.js';

export interface StatusRecordInput {
  id: string;
  status: DispatchStatus;
  /** ISO 8601 timestamp, any offset: written as UTC with milliseconds (`2026-11-20T09:30:00.000Z`). */
  dispatchDate: string;
  destination: { postal_code: string; country_code: string };
  prediction: Prediction;
  suggestion: UiSuggestion;
}

export function buildStatusRecord(input: StatusRecordInput): StatusRecord {
  // Fields are copied one by one rather than spread, so no extra property of an input can leak out.
  return {
    id: input.id,
    status: input.status,
    dispatch_date: normaliseTimestamp(input.dispatchDate),
    destination: {
      postal_code: input.destination.postal_code,
      country_code: input.destination.country_code,
    },
    prediction: {
      delivery_window: { min: input.prediction.window.min, max: input.prediction.window.max },
      confidence_level: input.prediction.confidence,
    },
    ui_suggestion: {
      locale: input.suggestion.locale,
      recommended_message: input.suggestion.recommended_message,
      recommended_action: input.suggestion.recommended_action,
    },
  };
}
