// The fingerprint of a registration: canonical JSON (keys sorted at every level) of the body as
// the issuer sent it, after validation, without `id` and without defaults. A repeated registration
// with the same id must carry the same fingerprint, else it is a 409 conflict.
import { canonicalJson } from '../domain/canonical-json.js';
import type { Registration } from '../domain/dispatch-schemas.js';

export function registrationFingerprint(body: Registration): string {
  const { id: _id, ...rest } = body;
  return canonicalJson(rest);
}
