// Canonical JSON: keys sorted at every level, undefined members left out, so that two bodies that
// mean the same give the same text (a registration's fingerprint, api/fingerprint.ts; the one a
// closed dispatch's workflow starts again with, ingest/carrier-events.ts).
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
