// Reading request headers the way every Node framework hands them over (Node's IncomingHttpHeaders,
// Koa's ctx.headers, Express's req.headers, a Fetch Headers object): case-insensitive, first value.
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/** The raw body as bytes; a parsed object is refused, because its bytes are not the ones signed. */
export function rawBytes(rawBody: Buffer | Uint8Array | string): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new TypeError('rawBody must be the raw request body (Buffer or string), read before any JSON parsing');
}
