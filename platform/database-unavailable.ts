// Which errors mean "Postgres cannot serve now" (unreachable, shutting down, starting, full) rather
// than "this statement is wrong": the API answers them 503 (api/errors.ts), the pool says an outage
// once (db/pool.ts), and the logger drops their stacks (platform/logger.ts). Here, not in db/, so
// that the logger may use it. Duck-typed, no driver import (so any refused or reset socket matches).

/**
 * Postgres SQLSTATE classes and codes that say "the database cannot serve now" rather than "this
 * statement is wrong": connection exceptions (08), the server shutting down or starting (57P01–57P03),
 * too many connections (53300).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']); // prettier-ignore

/** True when `error` means Postgres is unreachable, shutting down or too slow to connect to. */
export function isDatabaseUnavailable(error: unknown): boolean {
  // Duck-typed: a socket error comes from Node's own realm, where `instanceof Error` of another
  // realm (a test runner's VM context) is false.
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_NETWORK_CODES.has(code)))
    return true;
  // pg-pool's connect timeout and a connection lost mid-query carry no code.
  return typeof message === 'string' && /timeout exceeded when trying to connect|Connection terminated/.test(message);
}
