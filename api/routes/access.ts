// The access rule shared by every route that names a dispatch: a key sees only its own mode's
// dispatches (the other mode's id is simply not there: 404) and only its issuer's (403).
import type { ApiKey } from '../key-cache.js';
import { badRequest, dispatchNotFound, forbidden } from '../errors.js';
import { UUID_V4 } from '../../domain/field-schemas.js';
import type { DispatchRow } from '../../db/dispatches.js';

/** The `{id}` path parameter, which must be a UUID v4 (any other string or UUID version → 400). */
export function dispatchIdParam(id: string): string {
  if (!UUID_V4.test(id)) throw badRequest(`id: must be a UUID v4, got "${id.slice(0, 64)}"`);
  return id.toLowerCase();
}

export function checkAccess<T extends Pick<DispatchRow, 'issuerId' | 'mode'>>(key: ApiKey, id: string, row: T | undefined): T {
  if (!row || row.mode !== key.mode) throw dispatchNotFound(id);
  if (row.issuerId !== key.issuerId) throw forbidden(`dispatch ${id} was registered by another issuer`);
  return row;
}
