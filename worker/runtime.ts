// Routes the Temporal SDK's own logs (worker, activities, workflow `log`) into our pino logger,
// once per process. With `sdkMetricsAddress` it also starts the SDK's Prometheus exporter there
// (a local address: worker/metrics-server.ts fetches it and serves it with our own metrics).
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';

let installed = false;

export function installTemporalRuntime(logger: Logger, level: LogLevel = 'INFO', options: { sdkMetricsAddress?: string } = {}): void {
  if (installed) return;
  installed = true;

  const child = logger.child({ component: 'temporal' });
  try {
    Runtime.install({
      // Core (Rust) logs are forwarded too, so every line from this process is one pino JSON line.
      telemetryOptions: {
        logging: { filter: { core: level, other: 'ERROR' }, forward: {} },
        // The SDK's default names (`temporal_` prefix, as Temporal's SDK dashboards expect): apart from ours (`cds_`).
        ...(options.sdkMetricsAddress && { metrics: { prometheus: { bindAddress: options.sdkMetricsAddress } } }),
      },
      logger: new DefaultLogger(level, ({ level: lvl, message, meta }) => {
        const method = lvl === 'ERROR' ? 'error' : lvl === 'WARN' ? 'warn' : lvl === 'DEBUG' || lvl === 'TRACE' ? 'debug' : 'info';
        child[method](meta ?? {}, message);
      }),
    });
  } catch {
    // A runtime already exists in this process (created by an earlier module instance): keep it.
  }
}
