// Delivery window prediction. PLACEHOLDER SIGNATURE — being implemented (see test/unit/prediction.test.ts).
import type { ConfidenceLevel } from './schemas.js';
import type { DispatchState } from './state-machine.js';

export interface Prediction {
  window: { min: string; max: string };
  confidence: ConfidenceLevel;
}

export interface PredictionInput {
  /** ISO 8601 timestamp of dispatch. */
  dispatchDate: string;
  destination: { postal_code: string; country_code: string };
  state: DispatchState;
  /** The date the prediction is made, YYYY-MM-DD (UTC). */
  today: string;
}

export function predict(input: PredictionInput): Prediction {
  throw new Error('not implemented');
}
