// Webhook attempts keep their connection to a receiver open and reuse it (platform/ssrf-guard.ts
// postToCheckedAddress), without giving up the pinning that keeps them off the service's own
// network: a pooled connection only ever serves attempts whose check allowed the same addresses as
// the one it was opened for. Real receivers on 127.0.0.1 and 127.0.0.2, over plain HTTP and over TLS.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';
import { webhookConnectionsOpened } from '../../platform/metrics.js';
import { postToCheckedAddress, type CheckedUrl } from '../../platform/ssrf-guard.js';
import { selfSignedCertificate } from '../support/certificate.js';
import { silentAddress, type SilentAddress } from '../support/silent-address.js';
import { until } from '../support/until.js';

interface Receiver {
  port: number;
  /** Connections accepted (TCP; over TLS, each one a full handshake). */
  connections: number;
  /** Connections closed. */
  closed: number;
  /** Per request: the connection it came on (1-based), its Host header and the address it reached. */
  requests: Array<{ connection: number; host: string; localAddress: string }>;
  close(): Promise<void>;
}

type Answer = (req: http.IncomingMessage, res: http.ServerResponse, requestOnConnection: number) => void;

const ok: Answer = (_req, res) => res.end('ok');

async function listen(server: http.Server, address: string, port: number, answer: Answer): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const receiver: Receiver = {
    port: 0,
    connections: 0,
    closed: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  // Idle connections stay open on the receiver's side for longer than any test: what closes one is the sender.
  server.keepAliveTimeout = 60_000;
  const numbers = new WeakMap<Socket, { connection: number; requests: number }>();
  server.on(server instanceof https.Server ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => (receiver.closed += 1));
    numbers.set(socket, { connection: ++receiver.connections, requests: 0 });
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const seen = numbers.get(req.socket)!;
    seen.requests += 1;
    receiver.requests.push({ connection: seen.connection, host: req.headers.host ?? '', localAddress: req.socket.localAddress ?? '' });
    req.resume();
    req.on('end', () => answer(req, res, seen.requests));
  });
  await new Promise<void>((resolve) => server.listen(port, address, resolve));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}

const post = (checked: CheckedUrl, body = '{"id":"evt_1"}') =>
  postToCheckedAddress(checked, { headers: { 'Content-Type': 'application/json' }, body: Buffer.from(body), timeoutMs: 3000 });

/** `.invalid` never resolves: a request arrives only through the pinned address. */
const pinned = (protocol: 'http' | 'https', address: string, port: number): CheckedUrl => ({
  url: new URL(`${protocol}://hooks.invalid:${port}/cards`),
  addresses: [{ address, family: 4 }],
});

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});
const start = async (address: string, answer: Answer = ok, port = 0) => {
  const receiver = await listen(http.createServer(), address, port, answer);
  receivers.push(receiver);
  return receiver;
};

describe('webhook attempts over plain HTTP', () => {
  it('reuse one connection for successive attempts to the same checked address, with the URL’s Host', async () => {
    const receiver = await start('127.0.0.1');
    for (let i = 0; i < 3; i += 1) expect((await post(pinned('http', '127.0.0.1', receiver.port))).statusCode).toBe(200);
    expect(receiver.connections).toBe(1);
    expect(receiver.requests.map((r) => r.host)).toEqual(Array(3).fill(`hooks.invalid:${receiver.port}`));
  });

  it('count each connection they open (cds_webhook_connections_opened_total), not each attempt', async () => {
    const opened = async () => (await webhookConnectionsOpened.get()).values.find((v) => v.labels.scheme === 'http')?.value ?? 0;
    const receiver = await start('127.0.0.1');
    const before = await opened();
    for (let i = 0; i < 3; i += 1) await post(pinned('http', '127.0.0.1', receiver.port));
    expect((await opened()) - before).toBe(receiver.connections);
    expect(receiver.connections).toBe(1);
  });

  it('never share a connection between two checked addresses of the same URL: each goes to its own address', async () => {
    const first = await start('127.0.0.1');
    const second = await start('127.0.0.2', ok, first.port);
    await post(pinned('http', '127.0.0.1', first.port));
    await post(pinned('http', '127.0.0.2', first.port));
    await post(pinned('http', '127.0.0.1', first.port));
    expect(first.requests.map((r) => [r.connection, r.localAddress])).toEqual([[1, '127.0.0.1'], [1, '127.0.0.1']]); // prettier-ignore
    expect(second.requests.map((r) => [r.connection, r.localAddress])).toEqual([[1, '127.0.0.2']]);
  });

  it('send the attempt again on a fresh connection when the receiver closed the idle one as it was reused', async () => {
    // The race a pool meets in production: the receiver's keep-alive timeout ends just as the next
    // attempt goes out on the idle connection. Here the receiver drops every second request of a
    // connection unanswered, as a closing server does.
    const receiver = await start('127.0.0.1', (req, res, n) => (n === 1 ? res.end('ok') : req.socket.destroy()));
    expect((await post(pinned('http', '127.0.0.1', receiver.port))).statusCode).toBe(200);
    expect((await post(pinned('http', '127.0.0.1', receiver.port))).statusCode).toBe(200);
    expect(receiver.requests.map((r) => r.connection)).toEqual([1, 1, 2]);
  });

  it('do not send again when a fresh connection fails: the attempt fails, once', async () => {
    const receiver = await start('127.0.0.1', (req) => req.socket.destroy());
    await expect(post(pinned('http', '127.0.0.1', receiver.port))).rejects.toThrow(
      /the receiver (closed|reset) the connection without answering/,
    );
    expect(receiver.requests).toHaveLength(1);
  });

  it('read a short answer to its end and keep the connection; drop it after a long one, answering its head', async () => {
    const long = 'x'.repeat(1024 * 1024);
    const receiver = await start('127.0.0.1', (req, res) => res.end(req.url === '/long' ? long : `short ${'y'.repeat(600)}`));
    const to = (path: string): CheckedUrl => ({ ...pinned('http', '127.0.0.1', receiver.port), url: new URL(`http://hooks.invalid:${receiver.port}${path}`) }); // prettier-ignore
    const short = await post(to('/short'));
    expect(short.head.toString()).toBe(`short ${'y'.repeat(506)}`);
    await post(to('/short'));
    const head = await post(to('/long'));
    expect(head.head).toHaveLength(512);
    await post(to('/short'));
    // The long answer's connection is not returned to the pool unread: the next attempt opens another.
    expect(receiver.requests.map((r) => r.connection)).toEqual([1, 1, 1, 2]);
  });

  it('keep pools for the 256 most recently used addresses: the least recent one’s idle connection closes', async () => {
    const first = await start('127.0.0.1');
    await post(pinned('http', '127.0.0.1', first.port));
    for (let i = 0; i < 256; i += 1) {
      const address = `127.0.${1 + Math.floor(i / 250)}.${(i % 250) + 1}`;
      await post(pinned('http', address, (await start(address, ok, first.port)).port));
    }
    await until(() => first.closed === 1, 'the least recently used pool’s idle connection to close', 3000);
    expect(first.connections).toBe(1);
  });

  it('still fail an answer that sends its status and then trickles its body past the limit', async () => {
    const receiver = await start('127.0.0.1', (_req, res) => {
      res.writeHead(200);
      res.write('a');
    });
    const started = Date.now();
    await expect(
      postToCheckedAddress(pinned('http', '127.0.0.1', receiver.port), { headers: {}, body: Buffer.from('{}'), timeoutMs: 300 }),
    ).rejects.toThrow(/no complete answer within 300 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('webhook attempts to a host name with several checked addresses', () => {
  /** A host with these addresses, in the order its resolver gave them. */
  const host = (port: number, ...addresses: Array<[string, 4 | 6]>): CheckedUrl => ({
    url: new URL(`http://hooks.invalid:${port}/cards`),
    addresses: addresses.map(([address, family]) => ({ address, family })),
  });

  it('go on to the A record when the AAAA record’s address refuses the connection, and deliver there', async () => {
    const receiver = await start('127.0.0.1');
    const response = await post(host(receiver.port, ['::1', 6], ['127.0.0.1', 4]));
    expect(response.statusCode).toBe(200);
    expect(receiver.requests.map((r) => [r.host, r.localAddress])).toEqual([[`hooks.invalid:${receiver.port}`, '127.0.0.1']]);
  });

  it('go on to the second A record when the first address refuses the connection', async () => {
    const receiver = await start('127.0.0.1');
    expect((await post(host(receiver.port, ['127.0.0.2', 4], ['127.0.0.1', 4]))).statusCode).toBe(200);
    expect(receiver.requests).toHaveLength(1);
  });

  it('reuse a connection only for the same set of checked addresses, in whatever order the resolver gave them', async () => {
    const first = await start('127.0.0.1');
    await start('127.0.0.2', ok, first.port);
    await post(host(first.port, ['127.0.0.1', 4], ['127.0.0.2', 4]));
    await post(host(first.port, ['127.0.0.2', 4], ['127.0.0.1', 4]));
    // A check that allowed 127.0.0.1 alone does not take the connection opened when 127.0.0.2 was allowed too.
    await post(host(first.port, ['127.0.0.1', 4]));
    expect(first.requests.map((r) => r.connection)).toEqual([1, 1, 2]);
  });

  describe('when the first address never answers (its packets dropped)', () => {
    let silent: SilentAddress;
    beforeAll(async () => {
      silent = await silentAddress('127.0.0.3');
    });
    afterAll(() => silent.close());

    it('start the next address 250 ms later and deliver there, well within the limit', async () => {
      const receiver = await start('127.0.0.1', ok, silent.port);
      const started = Date.now();
      expect((await post(host(silent.port, ['127.0.0.3', 4], ['127.0.0.1', 4]))).statusCode).toBe(200);
      expect(Date.now() - started).toBeLessThan(1500);
      expect(receiver.requests).toHaveLength(1);
    });

    it('reuse the connection to the address that answered for the next attempt, without waiting on the silent one', async () => {
      const receiver = await start('127.0.0.1', ok, silent.port);
      // Its own host name: the test before left a connection to this port in the pool, which its receiver's close made stale.
      const checked: CheckedUrl = { ...host(silent.port, ['127.0.0.3', 4], ['127.0.0.1', 4]), url: new URL(`http://reuse.invalid:${silent.port}/cards`) }; // prettier-ignore
      await post(checked);
      expect((await post(checked)).statusCode).toBe(200);
      // Had the second attempt tried the silent address first, it would have opened a second connection 250 ms later.
      expect(receiver.connections).toBe(1);
      expect(receiver.requests.map((r) => r.connection)).toEqual([1, 1]);
    });

    it('fail at the limit, naming the limit, when no address answers', async () => {
      const started = Date.now();
      await expect(
        postToCheckedAddress(host(silent.port, ['127.0.0.3', 4]), { headers: {}, body: Buffer.from('{}'), timeoutMs: 400 }),
      ).rejects.toThrow(/no complete answer within 400 ms/);
      expect(Date.now() - started).toBeLessThan(1500);
    });
  });

  it('fail naming each address and why when every address refuses the connection', async () => {
    const receiver = await start('127.0.0.1');
    await receiver.close();
    await expect(post(host(receiver.port, ['::1', 6], ['127.0.0.1', 4]))).rejects.toThrow(
      /::1 \(ECONNREFUSED\).*127\.0\.0\.1 \(ECONNREFUSED\)/,
    );
  });
});

describe('webhook attempts over TLS', () => {
  let server: https.Server;
  let receiver: Receiver;
  // The process's trusted CAs as they were: restored after, since a jest worker runs other files next
  // (two certificates of the same subject trusted at once make OpenSSL pick the wrong one).
  const defaultCAs = tls.getCACertificates('default');
  beforeAll(async () => {
    const pems = await selfSignedCertificate('hooks.invalid');
    // The receiver's self-signed certificate is trusted like a public CA's: verification stays on.
    tls.setDefaultCACertificates([...defaultCAs, pems.cert]);
    server = https.createServer(pems);
    receiver = await listen(server, '127.0.0.1', 0, ok);
  });
  afterAll(async () => {
    tls.setDefaultCACertificates(defaultCAs);
    await receiver.close();
  });

  it('make one handshake for successive attempts, verifying the certificate of the URL’s host name', async () => {
    for (let i = 0; i < 3; i += 1) expect((await post(pinned('https', '127.0.0.1', receiver.port))).statusCode).toBe(200);
    expect(receiver.connections).toBe(1);
    expect(receiver.requests.map((r) => r.host)).toEqual(Array(3).fill(`hooks.invalid:${receiver.port}`));
  });

  it('reach the second address when the first refuses, verify the URL’s host name there, and keep that connection', async () => {
    const before = receiver.connections;
    const checked: CheckedUrl = {
      url: new URL(`https://hooks.invalid:${receiver.port}/second`),
      addresses: [
        { address: '127.0.0.2', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
    };
    for (let i = 0; i < 2; i += 1) expect((await post(checked)).statusCode).toBe(200);
    expect(receiver.connections - before).toBeLessThanOrEqual(1);
  });

  it('refuse a certificate that does not name the URL’s host, pooled or not', async () => {
    const other: CheckedUrl = {
      url: new URL(`https://other.invalid:${receiver.port}/cards`),
      addresses: [{ address: '127.0.0.1', family: 4 }],
    };
    await expect(post(other)).rejects.toThrow(/other\.invalid|altnames/i);
  });
});
