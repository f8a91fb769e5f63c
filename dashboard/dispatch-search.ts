// The dispatch search form (GET /dashboard/dispatches): its query string checked with zod into the
// filter of db/dispatches.ts `listDispatches` (the query GET /v1/dispatches runs), or into one
// message per bad field for the form to show. Dates are of registration (created_at), whole UTC
// days, both ends included.
import { z } from 'zod';
import { decodeDispatchCursor, encodeDispatchCursor, type DispatchListFilter } from '../db/dispatches.js';
import type { CreationCursor } from '../db/creation-cursor.js';
import { countryCode, isoDate, LIST_LIMIT_MAX, UUID_V4 } from '../domain/field-schemas.js';
import { dispatchStatus } from '../domain/vocabulary.js';

export const SEARCH_PAGE_SIZE = 25;

/** What the user typed, echoed back into the form (as strings, escaped by the view). */
export type SearchValues = Record<'id' | 'status' | 'country' | 'from' | 'to' | 'mode', string>;
export type SearchField = keyof SearchValues | 'cursor' | 'limit';

// One message per field, whatever zod's reason: the user needs to know what to type, not why.
const MESSAGES: Record<SearchField, string> = {
  id: 'Enter a whole dispatch id: a UUID such as 3f2b8c1e-5d4a-4b6f-9e21-7c8d9a0b1c2d.',
  status: 'Choose a status from the list.',
  country: 'Enter a two-letter ISO 3166-1 country code, such as FR or DE.',
  from: 'Enter the first registration date as YYYY-MM-DD.',
  to: 'Enter the last registration date as YYYY-MM-DD.',
  mode: 'Choose live or test mode.',
  cursor: 'This page link is not valid any more. Start again from the first page.',
  limit: `The page size must be a whole number from 1 to ${LIST_LIMIT_MAX}.`,
};

// An empty form field is no filter.
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const searchQuery = z
  .object({
    status: optional(dispatchStatus),
    country: optional(z.string().trim().pipe(countryCode)),
    from: optional(isoDate),
    to: optional(isoDate),
    mode: optional(z.enum(['live', 'test'])).transform((mode) => mode ?? 'live'),
    limit: optional(
      z
        .string()
        .regex(/^\d{1,3}$/)
        .transform(Number)
        .pipe(z.number().min(1).max(LIST_LIMIT_MAX)),
    ),
    cursor: optional(
      z
        .string()
        .max(200)
        .transform((text, ctx) => decodeDispatchCursor(text) ?? (ctx.addIssue({ code: 'custom', message: 'cursor' }), z.NEVER)),
    ),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { path: ['to'], message: 'The last date must be on or after the first date.' });

export type SearchQuery = z.output<typeof searchQuery>;

export type ParsedSearch = { values: SearchValues } & (
  { kind: 'open'; id: string } | { kind: 'list'; query: SearchQuery } | { kind: 'invalid'; errors: Partial<Record<SearchField, string>> }
);

export function parseSearch(raw: Record<string, string | string[] | undefined>): ParsedSearch {
  const text = (name: string) => (typeof raw[name] === 'string' ? (raw[name] as string) : '');
  const values: SearchValues = {
    id: text('id'),
    status: text('status'),
    country: text('country'),
    from: text('from'),
    to: text('to'),
    mode: text('mode') || 'live',
  };
  // An id names one dispatch: the other filters do not apply to it.
  const id = values.id.trim();
  if (id)
    return UUID_V4.test(id) ? { kind: 'open', values, id: id.toLowerCase() } : { kind: 'invalid', values, errors: { id: MESSAGES.id } };
  const parsed = searchQuery.safeParse(raw);
  if (parsed.success) return { kind: 'list', values, query: parsed.data };
  const errors: Partial<Record<SearchField, string>> = {};
  for (const issue of parsed.error.issues) {
    const field = issue.path[0] as SearchField;
    // The date-order rule has its own message; any other failure gets the field's message.
    errors[field] ??= issue.code === 'custom' && field === 'to' ? issue.message : MESSAGES[field];
  }
  return { kind: 'invalid', values, errors };
}

/** The filter for `listDispatches`, for the signed-in issuer. */
export function listFilter(query: SearchQuery, issuerId: string): DispatchListFilter {
  return {
    issuerId,
    mode: query.mode,
    status: query.status,
    countryCode: query.country,
    createdAfter: query.from && `${query.from}T00:00:00.000Z`,
    createdBefore: query.to && dayAfter(query.to),
    limit: query.limit ?? SEARCH_PAGE_SIZE,
    after: query.cursor,
  };
}

function dayAfter(date: string): string {
  const next = new Date(`${date}T00:00:00.000Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString();
}

/** The search page's URL for the same filters (normalised), optionally at a later page. */
export function searchUrl(query: SearchQuery, after?: CreationCursor): string {
  const params = new URLSearchParams();
  if (query.status) params.set('status', query.status);
  if (query.country) params.set('country', query.country);
  if (query.from) params.set('from', query.from);
  if (query.to) params.set('to', query.to);
  params.set('mode', query.mode);
  if (query.limit) params.set('limit', String(query.limit));
  if (after) params.set('cursor', encodeDispatchCursor(after));
  return `/dashboard/dispatches?${params}`;
}
