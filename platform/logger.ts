// One pino logger configuration for every process: JSON lines, secrets redacted by path, written
// asynchronously (pino flushes what is left when the process exits). Not batched by size: a quiet
// process must still show its lines at once.
import { pino, type Logger } from 'pino';
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
