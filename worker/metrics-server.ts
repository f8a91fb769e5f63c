// The worker's own small HTTP server (WORKER_METRICS_PORT, 9464; docs/monitoring.md "Metrics"):
// - /metrics: this process's metrics (platform/metrics.ts: webhook attempts, carrier events, the
//   prediction refresh, pending deliveries read from Postgres on scrape), followed by the Temporal
//   SDK's own worker metrics, fetched from its Prometheus exporter on a local address
//   (worker/runtime.ts). Only the SDK's `temporal_*` families are kept, so no name can collide
//   with ours; if the exporter does not answer, our metrics are served alone.
// - /healthz: the process answers.
// - /readyz: 200 while `ready()` (the worker polls its task queue), 503 once it is draining.
// Used by worker/main.ts and by `npm start` (cli/start.ts), which runs a worker in-process.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { countPendingDeliveriesByAge } from '../db/delivery-backlog.js';
import type { Pool } from '../db/pool.js';
import { listenOn } from '../platform/listen.js';
import type { Logger } from '../platform/logger.js';
import { METRICS_CONTENT_TYPE, metricsText, observePendingDeliveries } from '../platform/metrics.js';

const SDK_SCRAPE_TIMEOUT_MS = 2_000;

export interface WorkerMetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startWorkerMetricsServer(options: {
  port: number;
  host: string;
  pool: Pool;
  logger: Logger;
  /** True while the worker polls its task queue (Worker state RUNNING). */
  ready: () => boolean;
  /** The SDK's Prometheus exporter, e.g. http://127.0.0.1:PORT/metrics. */
  sdkMetricsUrl?: string;
}): Promise<WorkerMetricsServer> {
  observePendingDeliveries(() => countPendingDeliveriesByAge(options.pool));

  const sdkMetrics = async (): Promise<string> => {
    if (!options.sdkMetricsUrl) return '';
    try {
      const response = await fetch(options.sdkMetricsUrl, { signal: AbortSignal.timeout(SDK_SCRAPE_TIMEOUT_MS) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return temporalFamiliesOnly(await response.text());
    } catch (error) {
      options.logger.warn({ err: error }, 'the Temporal SDK metrics exporter did not answer; serving our metrics alone');
      return '';
    }
  };

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'Content-Type': type });
      res.end(body);
    };
    if (req.method !== 'GET') return send(405, 'application/json', JSON.stringify({ error: 'method_not_allowed' }));
    if (path === '/healthz') return send(200, 'application/json', JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      return options.ready()
        ? send(200, 'application/json', JSON.stringify({ status: 'ready' }))
        : send(503, 'application/json', JSON.stringify({ status: 'not ready', message: 'the worker is not polling its task queue' }));
    }
    if (path === '/metrics') {
      void sdkMetrics()
        .then((sdk) => metricsText(sdk))
        .then(
          (text) => send(200, METRICS_CONTENT_TYPE, text),
          (error) => {
            options.logger.error({ err: error }, 'metrics collection failed');
            send(500, 'text/plain', 'metrics collection failed\n');
          },
        );
      return;
    }
    send(404, 'application/json', JSON.stringify({ error: 'not_found' }));
  });
  await listenOn(server, { port: options.port, host: options.host, variable: 'WORKER_METRICS_PORT', hostVariable: 'HOST' });
  const { port } = server.address() as AddressInfo;
  const shownHost = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  return {
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The exporter's text less any family not named `temporal_*` (HELP, TYPE and sample lines alike). */
export function temporalFamiliesOnly(text: string): string {
  const kept = text.split('\n').filter((line) => {
    const name = line.startsWith('# ') ? line.split(' ')[2] : line;
    return name !== undefined && name.startsWith('temporal_');
  });
  return kept.length > 0 ? `${kept.join('\n')}\n` : '';
}

/** A port free on 127.0.0.1 when asked, for the SDK's exporter (it takes an address, not port 0). */
export async function freeLocalPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
