// One pino logger configuration for every process: JSON lines, secrets redacted by path.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(options: { level?: string; name?: string; destination?: number } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      name: options.name,
      base: { pid: process.pid, service: options.name },
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret', '*.key', '*.secret'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: options.destination ?? 1, sync: false }),
  );
}
