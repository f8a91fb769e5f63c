// Keyset paging in creation order, the one way the API's lists page (docs/http-contract.md
// "GET /v1/dispatches (list)" says it for the first of them): a page asks for one row more than its limit, ordered by (created_at, id), and the
// cursor after it is the last row's created_at, to the microsecond (a JS Date would drop them), and
// id. Callers see it opaque (base64url of "created_at|id"), so its layout may change without notice;
// a cursor this module did not make, or one of another list (whose ids have another shape), decodes
// to undefined and the route answers 400 naming `cursor`. Stable under concurrent inserts, and each
// page costs an index range scan whatever its depth.

/** A timestamptz column as ISO 8601 UTC text to the microsecond, as every cursor holds its time. */
export const utcMicroseconds = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The row's created_at as a cursor holds it; select it `AS cursor_at`. */
export const CURSOR_AT = utcMicroseconds('created_at');

/** Where a page ended. */
export interface CreationCursor {
  createdAt: string;
  id: string;
}

/** The page of a query that asked for `limit + 1` rows, and the cursor after it when more follow. */
export function creationPage<Row extends { cursor_at: string; id: string }, Item>(
  rows: readonly Row[],
  limit: number,
  toItem: (row: Row) => Item,
): { items: Item[]; next?: CreationCursor } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { items: page.map(toItem), next: rows.length > limit && last ? { createdAt: last.cursor_at, id: last.id } : undefined };
}

/**
 * The cursors of one list, whose ids match `id` (a pattern without anchors). GET
 * /v1/dispatches/{id}/events pages by (received_at, dedupe key) with these too (db/carrier-events.ts).
 */
export function creationCursors(id: RegExp) {
  const shape = new RegExp(`^(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z)\\|(${id.source})$`);
  return {
    encode: (cursor: CreationCursor): string => Buffer.from(`${cursor.createdAt}|${cursor.id}`, 'utf8').toString('base64url'),
    /** Undefined for anything `encode` did not make. */
    decode(text: string): CreationCursor | undefined {
      const match = shape.exec(Buffer.from(text, 'base64url').toString('utf8'));
      return match && isCalendarInstant(match[1]) ? { createdAt: match[1], id: match[2] } : undefined;
    },
  };
}

/**
 * True when `at` (…T…\.ffffffZ) names an instant as written: Date.parse takes 2026-02-30 (as 2 March)
 * and 24:00, and year 0000, all of which Postgres refuses (a 500 for a tampered cursor, not a 400).
 */
export function isCalendarInstant(at: string): boolean {
  const ms = Date.parse(at);
  return !Number.isNaN(ms) && !at.startsWith('0000') && new Date(ms).toISOString().slice(0, 23) === at.slice(0, 23);
}
