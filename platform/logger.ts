// One pino logger configuration for every process: JSON lines, secrets redacted by path, written
// asynchronously (pino flushes what is left when the process exits). Not batched by size: a quiet
// process must still show its lines at once. Logged errors lose what a database driver copies from
// the failing row or statement (docs/privacy.md: ids only in the logs, never a postal code, tracking
// number, reference, location or message).
import { pino, type Logger } from 'pino';
import { isDatabaseUnavailable } from './database-unavailable.js';
import { currentTraceId, tracingConfigured } from './tracing.js';

export type { Logger };

export function createLogger(options: { level?: string; name?: string; destination?: number } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      name: options.name,
      base: { pid: process.pid, service: options.name },
      // With tracing configured, each line logged inside a span carries its trace id
      // (docs/monitoring.md "Traces"); without, no mixin at all.
      ...(tracingConfigured() ? { mixin: traceMixin } : {}),
      // Every error logged by this process, under any top-level key (`err`, the Temporal SDK's `error`):
      // serialized here, without the row data, before pino's own serializers see it.
      formatters: { log: withoutRowData },
      // …so pino's own `err` serializer must leave the serialized error as it is.
      serializers: { err: (value: unknown) => (isError(value) ? serializeError(value) : value) },
      redact: {
        // Explicit paths only: wildcard paths make pino walk every logged object.
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret', 'err.secret', 'err.key'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: options.destination ?? 1, sync: false }),
  );
}

function traceMixin(): { trace_id?: string } {
  const traceId = currentTraceId();
  return traceId ? { trace_id: traceId } : {};
}

/**
 * What node-postgres' DatabaseError copies from the server: `detail` ("Failing row contains (…)",
 * "Key (…)=(…) already exists"), `where` (the PL/pgSQL context, with values), `internalQuery`; and
 * any driver's bound `parameters`. The code, constraint, table and column stay: they say what failed.
 */
const ROW_DATA_FIELDS = ['detail', 'where', 'internalQuery', 'parameters'] as const;

function isError(value: unknown): value is Error {
  return value instanceof Error;
}

/**
 * An error as pino serializes it (with its causes' messages), minus the row data, at any depth. One
 * that says the database is unreachable loses its stack too: in an outage every request and activity
 * attempt fails with it, and its stack says nothing the message does not (docs/runbook.md "Postgres unreachable").
 */
function serializeError(error: Error): Record<string, unknown> {
  const serialized = { ...(pino.stdSerializers.err(error) as unknown as Record<string, unknown>) };
  if (isDatabaseUnavailable(error)) delete serialized.stack;
  return scrub(serialized, 0);
}

function scrub(serialized: Record<string, unknown>, depth: number): Record<string, unknown> {
  for (const field of ROW_DATA_FIELDS) delete serialized[field];
  if (depth > 4) return serialized;
  for (const [key, value] of Object.entries(serialized)) {
    if (Array.isArray(value)) {
      serialized[key] = value.map((item) => (item && typeof item === 'object' ? scrub({ ...item }, depth + 1) : item));
    } else if (value && typeof value === 'object' && 'message' in value && 'stack' in value) {
      serialized[key] = scrub({ ...(value as Record<string, unknown>) }, depth + 1);
    }
  }
  return serialized;
}

/** The log object with every top-level error serialized without row data; objects without one pass unchanged (the hot path). */
export function withoutRowData(object: Record<string, unknown>): Record<string, unknown> {
  let result = object;
  for (const key in object) {
    const value = object[key];
    if (isError(value)) {
      if (result === object) result = { ...object };
      result[key] = serializeError(value);
    }
  }
  return result;
}
