// The fingerprint of a registration: canonical JSON (keys sorted at every level) of the body as
// the issuer sent it, after validation, without `id` and without defaults. A repeated registration
// with the same id must carry the same fingerprint, else it is a 409 conflict.
import type { Registration } from '../domain/schemas.js';

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export function registrationFingerprint(body: Registration): string {
  const { id: _id, ...rest } = body;
  return canonicalJson(rest);
}
