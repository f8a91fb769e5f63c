// The access rule shared by every route that names a dispatch: a key sees only its own mode's
// dispatches (the other mode's id is simply not there: 404) and only its issuer's (403). An erased
// dispatch keeps only its tombstone (db/erasure-records.ts), which the same rule guards: its owner
// is told it was erased (404), another issuer gets 403 as for a live dispatch.
import type { ApiKey } from '../key-cache.js';
import { badRequest, dispatchNotFound, forbidden, notFound } from '../errors.js';
import { UUID_V4 } from '../../domain/field-schemas.js';
import type { DispatchRow } from '../../db/dispatches.js';
import { findTombstone } from '../../db/erasure-records.js';
import type { Pool } from '../../db/pool.js';
import { erasedMessage } from '../../ingest/erasure.js';

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

/** The 404 for an erased dispatch: says so, and when. */
export const dispatchErased = (id: string, erasedAt: Date) => notFound(erasedMessage(id, erasedAt));

/**
 * For a dispatch id with no projection to read (none, or its erasure was requested): throws the
 * erased 404 (or the access check's 404/403) when the id has a tombstone, and returns when it has
 * none (the caller answers its own 404).
 */
export async function refuseErased(pool: Pool, key: ApiKey, id: string): Promise<void> {
  const tombstone = await findTombstone(pool, id);
  if (!tombstone) return;
  checkAccess(key, id, tombstone);
  throw dispatchErased(id, tombstone.erasedAt);
}

/** `checkAccess`, after `refuseErased` when there is no row. */
export async function checkAccessOrErased<T extends Pick<DispatchRow, 'issuerId' | 'mode'>>(
  pool: Pool,
  key: ApiKey,
  id: string,
  row: T | undefined,
): Promise<T> {
  if (!row) await refuseErased(pool, key, id);
  return checkAccess(key, id, row);
}
