// Routes the Temporal SDK's own logs (worker, activities, workflow `log`) into our pino logger,
// once per process. With `sdkMetricsAddress` it also starts the SDK's Prometheus exporter there
// (a local address: worker/metrics-server.ts fetches it and serves it with our own metrics).
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';

let installed = false;

const SDK_LEVELS: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN' };

/**
 * The SDK logger's level for a LOG_LEVEL (pino's names): the same threshold, so that the activities'
 * and workflows' lines (`projection written`, `webhook delivered`, …) are kept or dropped as the
 * API's are. `error`, `fatal` and `silent` are ERROR: pino drops what they exclude.
 */
export function sdkLogLevel(level: string): LogLevel {
  return SDK_LEVELS[level] ?? 'ERROR';
}

/**
 * What the SDK core (Rust) forwards: its warnings and errors only, whatever `level` says. Its own
 * info and debug lines (pollers, activations, connections) are the SDK's internals, several per
 * workflow task: at `info` or `debug` they would flood the lines an operator reads.
 */
function coreLogLevel(level: LogLevel): LogLevel {
  return level === 'ERROR' ? 'ERROR' : 'WARN';
}

export function installTemporalRuntime(logger: Logger, level: LogLevel = 'INFO', options: { sdkMetricsAddress?: string } = {}): void {
  if (installed) return;
  installed = true;

  const child = logger.child({ component: 'temporal' });
  try {
    Runtime.install({
      // Core (Rust) logs are forwarded too, so every line from this process is one pino JSON line.
      telemetryOptions: {
        logging: { filter: { core: coreLogLevel(level), other: 'ERROR' }, forward: {} },
        // The SDK's default names (`temporal_` prefix, as Temporal's SDK dashboards expect): apart from ours (`cds_`).
        ...(options.sdkMetricsAddress && { metrics: { prometheus: { bindAddress: options.sdkMetricsAddress } } }),
      },
      logger: new DefaultLogger(level, ({ level: lvl, message, meta }) => {
        const method = lvl === 'ERROR' ? 'error' : lvl === 'WARN' ? 'warn' : lvl === 'DEBUG' ? 'debug' : lvl === 'TRACE' ? 'trace' : 'info';
        child[method](meta ?? {}, message);
      }),
    });
  } catch {
    // A runtime already exists in this process (created by an earlier module instance): keep it.
  }
}
