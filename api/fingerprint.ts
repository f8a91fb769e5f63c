// The fingerprint of a registration: canonical JSON (keys sorted at every level) of the body as
// the issuer sent it, after validation, without `id` and without defaults, its `dispatch_date` as
// the instant in UTC (`…Z`, milliseconds, as the service answers it): the same instant written
// another way (`…17Z`, `…17.000Z`, `…18:09:17+01:00`) is the same body. A repeated registration
// with the same id must carry the same fingerprint, else it is a 409 conflict.
import { canonicalJson } from '../domain/canonical-json.js';
import type { Registration } from '../domain/dispatch-schemas.js';
import { toUtc } from '../domain/field-schemas.js';

export function registrationFingerprint(body: Registration): string {
  const { id: _id, ...rest } = body;
  return canonicalJson(withUtcDate(rest));
}

/**
 * A stored fingerprint (the projection's `registration`) as registrationFingerprint writes it today:
 * one stored before the instant was normalised holds `dispatch_date` as it was sent.
 */
export function normalisedFingerprint(stored: unknown): string {
  const body = typeof stored === 'string' ? (JSON.parse(stored) as Record<string, unknown>) : (stored as Record<string, unknown>);
  return canonicalJson(withUtcDate(body));
}

function withUtcDate<T extends { dispatch_date?: unknown }>(body: T): T {
  return typeof body.dispatch_date === 'string' ? { ...body, dispatch_date: toUtc(body.dispatch_date) } : body;
}
