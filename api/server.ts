// Starts the API and the dashboard on a port (0 = any free one) and stops them cleanly: used by
// main.ts, `npm start` and the test harness. The composition root of the HTTP side: the one module
// that imports both the API (./app.ts) and the dashboard (dashboard/index.ts); neither imports the other.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dashboard } from '../dashboard/index.js';
import { listenOn } from '../platform/listen.js';
import { traceRequests } from '../platform/tracing.js';
import { createApp, createRequestHandler, disposeApp, type AppDeps } from './app.js';

export interface RunningApi {
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

export async function startApi(deps: AppDeps & { port?: number; host?: string }): Promise<RunningApi> {
  const app = createApp(deps, { pages: dashboard(deps) });
  const server = http.createServer(traceRequests(createRequestHandler(app, deps))); // a server span when tracing is on
  // Longer than a typical load balancer's idle timeout, so it is the balancer that closes idle connections.
  server.keepAliveTimeout = 65_000;
  const host = deps.host ?? deps.config.HOST;
  // A port in use names PORT (tests pass a port of their own, 0 for any free one).
  await listenOn(server, { port: deps.port ?? deps.config.PORT, host, variable: 'PORT', hostVariable: 'HOST' });
  const { port } = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    server,
    url: `http://${shownHost}:${port}`,
    close: async () => {
      await disposeApp(app);
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      });
    },
  };
}
