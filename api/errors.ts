// Errors as values: any layer of the API throws an ApiError naming the HTTP status and the
// error code of docs/http-contract.md; the error renderer middleware is the one place that turns
// them (and anything unexpected) into the `{ error, message }` body. Errors of the layers below
// that have an HTTP meaning (Temporal or Postgres unavailable) get it here, in `asApiError`.
import type { z } from 'zod';
import type { ErrorCode } from '../domain/dispatch-schemas.js';
import { describeIssues, FIELD_ERRORS } from '../domain/field-errors.js';
import { isDatabaseUnavailable } from '../db/pool.js';
import { TemporalUnavailable } from '../temporal/client.js';
import type { IngestOutcome } from '../ingest/carrier-events.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Headers the response must carry, e.g. `Retry-After` or `Allow`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string) => new ApiError(400, 'bad_request', message);
export const unauthorized = (message = 'a valid API key is required: send "Authorization: Bearer <API_KEY>"') =>
  new ApiError(401, 'unauthorized', message);
export const forbidden = (message: string) => new ApiError(403, 'forbidden', message);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const conflict = (message: string) => new ApiError(409, 'conflict', message);
/**
 * Seconds a 503 asks the client to wait before retrying (`Retry-After`): a Postgres restart or a
 * failover, and a Temporal frontend coming back, take seconds; a pool reconnects on the next request.
 */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_S = 5;
export const serviceUnavailable = (message: string) =>
  new ApiError(503, 'service_unavailable', message, { 'Retry-After': String(SERVICE_UNAVAILABLE_RETRY_AFTER_S) });

/** The ApiError an error stands for: itself, 503 for Temporal or Postgres unavailable; undefined when unexpected. */
export function asApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof TemporalUnavailable) return serviceUnavailable(error.message);
  if (isDatabaseUnavailable(error)) return serviceUnavailable('the database is unavailable; nothing was changed, retry shortly');
  return undefined;
}

export const dispatchNotFound = (id: string) =>
  notFound(`no dispatch ${id}; check the id (a newly registered dispatch may take up to 60 seconds to appear)`);

/**
 * Validates at the edge: the parsed value, or a 400 that names every failing field
 * (`destination.country_code: must be …; locale: …`, worded by domain/field-errors.ts).
 */
export function parseOrBadRequest<S extends z.ZodType>(schema: S, value: unknown, prefix?: string): z.output<S> {
  const parsed = schema.safeParse(value, FIELD_ERRORS);
  if (!parsed.success) throw badRequest(describeIssues(parsed.error.issues, prefix ? [prefix] : []));
  return parsed.data;
}

/** A carrier event's ingest (ingest/carrier-events.ts) in HTTP terms: accepted, else 400 naming occurred_at, 409 for a closed dispatch or 404 for an erased one. */
export function acceptedOrThrow(outcome: IngestOutcome): { duplicate: boolean; dedupeKey: string } {
  if (outcome.outcome === 'out_of_bounds') throw badRequest(`occurred_at: ${outcome.problem}`);
  if (outcome.outcome === 'closed') throw conflict(outcome.message);
  if (outcome.outcome === 'erased') throw notFound(outcome.message);
  return outcome;
}
