// A Temporal frontend that takes only mTLS and an API key, for the tests of the service's TLS settings
// (test/temporal/tls.test.ts): an HTTP/2 server over TLS that asks for a client certificate signed by
// its CA, refuses a call without `authorization: Bearer <apiKey>` (gRPC status 16, UNAUTHENTICATED, as
// Temporal Cloud does), and forwards every other gRPC call to the tests' plain dev server. Certificates
// from a CA of its own (selfsigned): the frontend's names `temporal.test`, so a client must set the
// server name and trust the CA, as with a private CA in production.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';

export const TLS_SERVER_NAME = 'temporal.test';

export interface TemporalTlsProxy {
  address: string;
  apiKey: string;
  /** PEM files: the CA (of the server and the client), the client's certificate and key. */
  files: { ca: string; clientCert: string; clientKey: string };
  /** Calls forwarded, and refused for their API key. */
  calls: { forwarded: number; unauthenticated: number };
  close(): Promise<void>;
}

async function certificates() {
  const notAfterDate = new Date(Date.now() + 86_400_000);
  const ca = await generate([{ name: 'commonName', value: 'cds test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const signed = (commonName: string, extensions: object[]) =>
    generate([{ name: 'commonName', value: commonName }], {
      keyType: 'ec',
      algorithm: 'sha256',
      notAfterDate,
      ca: { key: ca.private, cert: ca.cert },
      extensions: [{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, critical: true }, ...extensions],
    } as Parameters<typeof generate>[1]);
  const server = await signed(TLS_SERVER_NAME, [
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: TLS_SERVER_NAME }] },
  ]);
  const client = await signed('card-delivery', [{ name: 'extKeyUsage', clientAuth: true }]);
  return { ca: ca.cert, server, client };
}

/** Strips the pseudo-headers and connection headers that cannot be relayed as they are. */
function relayable(headers: http2.IncomingHttpHeaders, drop: readonly string[]): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !drop.includes(name)) out[name] = value;
  return out;
}

export async function startTemporalTlsProxy(target: string, apiKey = 'cds-test-api-key'): Promise<TemporalTlsProxy> {
  const pems = await certificates();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cds-temporal-tls-'));
  const files = { ca: path.join(dir, 'ca.pem'), clientCert: path.join(dir, 'client.pem'), clientKey: path.join(dir, 'client.key') };
  writeFileSync(files.ca, pems.ca);
  writeFileSync(files.clientCert, pems.client.cert);
  writeFileSync(files.clientKey, pems.client.private, { mode: 0o600 });

  const calls = { forwarded: 0, unauthenticated: 0 };
  const upstream = http2.connect(`http://${target}`);
  upstream.on('error', () => undefined);
  const server = http2.createSecureServer({
    key: pems.server.private,
    cert: pems.server.cert,
    ca: pems.ca,
    requestCert: true,
    rejectUnauthorized: true,
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    if (headers.authorization !== `Bearer ${apiKey}`) {
      calls.unauthenticated++;
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'API key missing or wrong' }, { endStream: true }); // prettier-ignore
      return;
    }
    calls.forwarded++;
    const call = upstream.request(relayable(headers, [':scheme', ':authority']));
    call.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    stream.on('close', () => call.close());
    stream.pipe(call);
    let trailers: http2.OutgoingHttpHeaders = {};
    call.on('trailers', (received) => (trailers = relayable(received, [])));
    call.on('response', (received) => {
      const head = relayable(received, []);
      // A trailers-only answer (an error status in the headers) ends there.
      if (received['grpc-status'] !== undefined) return stream.respond(head, { endStream: true });
      stream.respond(head, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      call.pipe(stream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    apiKey,
    files,
    calls,
    async close() {
      await new Promise((resolve) => {
        server.close(resolve);
        // Long polls would hold the close: end every session now.
        for (const session of sessions) session.destroy();
      });
      upstream.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
