// A real local HTTP server standing in for an issuer's webhook endpoint (outside our system, so a
// stand-in is fair): it records every request with its raw body bytes and answers as told. With
// `tls` it is an HTTPS server, as production endpoints are (the sender must trust its certificate).
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  receivedAt: number;
  /** Whatever the test attached when the request arrived (e.g. the test server's skipped clock). */
  note?: unknown;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Decides the status of each request, by its 1-based arrival number. */
  respond: (n: number) => number | Promise<number>;
  close(): Promise<void>;
}

export async function startReceiver(
  options: {
    respond?: Receiver['respond'];
    note?: () => Promise<unknown>;
    responseBody?: string;
    /** PEM key and certificate: serve HTTPS. */
    tls?: { key: string; cert: string };
  } = {},
): Promise<Receiver> {
  const receiver = {
    requests: [] as ReceivedRequest[],
    respond: options.respond ?? (() => 200),
  } as Receiver;
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const entry: ReceivedRequest = { headers: req.headers, body: Buffer.concat(chunks), receivedAt: Date.now() };
      receiver.requests.push(entry);
      if (options.note) entry.note = await options.note();
      res.statusCode = await receiver.respond(receiver.requests.length);
      res.end(options.responseBody);
    });
  };
  const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
