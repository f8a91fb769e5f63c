// `npm start`'s demo webhook receiver: the consumer end of the demo endpoint (cli/demo.ts), served
// by the launcher itself on 127.0.0.1:DEMO_WEBHOOK_PORT, so that a new user sees signed webhooks
// arrive without running anything else. Each request is verified on its raw bytes with the consumer
// kit (consumer-kit/src/verify.ts, the code an issuer would run) against the endpoint's secrets as
// the database holds them now (a rotation's previous secret too), then one line per webhook goes to
// stdout: type, event id, dispatch id, attempt, signature ok or failed. Ids only, never a field of
// the status record (docs/privacy.md). A failed signature is answered 401, so the service retries.
import http from 'node:http';
import { readEndpointSecrets } from '../db/webhook-endpoints.js';
import type { Pool } from '../db/pool.js';
import { listenOn } from '../platform/listen.js';
import { header, parse, verifyRequest } from '../consumer-kit/src/index.js';

const PATH = '/demo-webhooks';
const MAX_BODY_BYTES = 1024 * 1024;

/** The URL the demo endpoint points at for a receiver on this port. */
export function demoReceiverUrl(port: number): string {
  return `http://127.0.0.1:${port}${PATH}`;
}

/** Whether a URL is one of the demo receiver's (on any port): the endpoint was not pointed elsewhere. */
export function isDemoReceiverUrl(url: string): boolean {
  return /^http:\/\/127\.0\.0\.1:\d{1,5}\/demo-webhooks$/.test(url);
}

export interface DemoReceiver {
  url: string;
  /** `http://127.0.0.1:<port>`: the one loopback origin the launcher's worker may deliver to, for the demo endpoint. */
  origin: string;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1:`port` for the demo endpoint's webhooks. A port held by another process
 * rejects with one line naming DEMO_WEBHOOK_PORT (platform/listen.ts).
 */
export async function startDemoReceiver(options: {
  port: number;
  pool: Pool;
  endpoint: { issuerId: string; endpointId: string };
  /** Where each webhook's line goes (stdout). */
  write?: (line: string) => void;
}): Promise<DemoReceiver> {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const server = http.createServer((req, res) => {
    if (req.url !== PATH) return void res.writeHead(404).end();
    if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST' }).end();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      void receive(Buffer.concat(chunks), req.headers).then(
        (status) => res.writeHead(status).end(),
        () => res.writeHead(503).end(),
      );
    });
  });

  async function receive(body: Buffer, headers: http.IncomingHttpHeaders): Promise<number> {
    const eventId = printable(header(headers, 'x-service-event-id'));
    const attempt = printable(header(headers, 'x-service-delivery-attempt'));
    const stored = await readEndpointSecrets(options.pool, options.endpoint.issuerId, options.endpoint.endpointId);
    const secrets = stored ? [stored.current, ...(stored.previous ? [stored.previous] : [])] : [];
    const verified = secrets.length > 0 ? verifyRequest(body, headers, secrets) : ({ ok: false, reason: 'endpoint removed' } as const);
    if (!verified.ok) {
      // Nothing of an unverified body is shown: it could say anything.
      write(`demo webhook  event ${eventId}  attempt ${attempt}  signature failed (${verified.reason})`);
      return 401;
    }
    let about: string;
    let type: string;
    try {
      const envelope = parse(body);
      type = envelope.event;
      about =
        envelope.event === 'webhook_endpoint.disabled'
          ? `endpoint ${printable(envelope.data.id)}`
          : `dispatch ${printable(envelope.data.id)}`;
    } catch {
      type = '?';
      about = 'body not understood';
    }
    write(`demo webhook  ${type}  event ${eventId}  ${about}  attempt ${attempt}  signature ok`);
    return 200;
  }

  await listenOn(server, { port: options.port, host: '127.0.0.1', variable: 'DEMO_WEBHOOK_PORT' });
  return {
    url: demoReceiverUrl(options.port),
    origin: `http://127.0.0.1:${options.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A header value fit for one terminal line: an id's characters only, else `?`. */
function printable(value: string | undefined): string {
  return value !== undefined && /^[\w-]{1,64}$/.test(value) ? value : '?';
}
