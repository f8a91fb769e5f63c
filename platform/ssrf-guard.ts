// Keeps webhook requests from reaching the service's own network (SSRF, docs/webhooks.md).
// `checkWebhookUrl` resolves the host and refuses it unless EVERY address it resolves to is public
// unicast; `postToCheckedAddress` then connects only to the addresses that were checked (no second
// DNS lookup an attacker could answer differently: no DNS rebinding), which node's net.connect tries
// in turn, Happy Eyeballs style (RFC 8305: IPv6 and IPv4 alternating, each address given 250 ms or
// until it fails), so a host whose AAAA record is unreachable from here, or one of whose A records
// is down, is still delivered to. It keeps the Host header and the TLS server name of the URL,
// and never follows a redirect (node:http does not). Checked when an endpoint is added and again
// before every attempt. The range logic is ipaddr.js's, plus what it does not name: IPv4-compatible
// IPv6 (::/96, deprecated, routed nowhere), IPv6 outside global unicast 2000::/3, and the cloud
// host addresses that serve metadata (169.254.169.254, Azure's 168.63.129.16, …). An IPv6 address
// that embeds an IPv4 one is judged by the IPv4 address.
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction, TcpSocketConnectOpts } from 'node:net';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { webhookConnectionsOpened } from './metrics.js';

export class WebhookUrlRefused extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`webhook URL refused: ${reason}`);
  }
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export interface CheckedUrl {
  url: URL;
  /** Every address the host resolved to, each one allowed, in the resolver's order: requests connect to these only. */
  addresses: CheckedAddress[];
}

// Refused whatever the setting: not routable to a single host, or a cloud metadata service.
const ALWAYS_REFUSED_V4 = new Set(['unspecified', 'broadcast', 'multicast', 'reserved', 'as112', 'amt']);
const ALWAYS_REFUSED_V6 = new Set(['unspecified', 'multicast', 'reserved', 'discard', 'benchmarking', 'amt', 'as112v6', 'deprecatedOrchid', 'orchid2', 'droneRemoteIdProtocolEntityTags', 'segmentRouting', 'teredo']); // prettier-ignore
// Refused unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (development and tests reach 127.0.0.1 receivers),
// or, for loopback only, the caller names the URL's exact origin in `loopbackOrigin` (checkWebhookUrl).
const PRIVATE_V4 = new Set(['loopback', 'private', 'linkLocal', 'carrierGradeNat']);
const PRIVATE_V6 = new Set(['loopback', 'linkLocal', 'uniqueLocal', 'deprecatedSiteLocal']);
// AWS/GCP/Azure/OCI instance metadata, AWS's over IPv6, Alibaba's, AWS ECS task metadata, and Azure's
// host address 168.63.129.16 (its wire server and DNS: public space, so no range catches it).
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '169.254.170.2', '168.63.129.16']);
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** Why an address is refused, or undefined when a webhook may be sent to it. */
export function refusalFor(address: string, options: { allowPrivate: boolean }): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const embedded = embeddedIPv4(ip as ipaddr.IPv6);
    if (embedded) {
      const why = refusalFor(embedded, options);
      return why && `${address} embeds ${embedded}: ${why}`;
    }
  }
  const normalised = ip.toNormalizedString();
  if (METADATA.has(ip.toString()) || METADATA.has(normalised)) return `${address} is a cloud metadata address`;
  const range = ip.range();
  const [always, privateRanges] = ip.kind() === 'ipv4' ? [ALWAYS_REFUSED_V4, PRIVATE_V4] : [ALWAYS_REFUSED_V6, PRIVATE_V6];
  if (always.has(range)) return `${address} is in a ${range} range`;
  if (privateRanges.has(range) && !options.allowPrivate) return `${address} is in a ${range} range (allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)`; // prettier-ignore
  if (ip.kind() === 'ipv6' && range === 'unicast') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.match(IPV4_COMPATIBLE)) return `${address} is IPv4-compatible IPv6 (::/96, embeds ${v6.toByteArray().slice(12).join('.')}), deprecated and routed nowhere`; // prettier-ignore
    if (!v6.match(GLOBAL_UNICAST_V6)) return `${address} is not in the global unicast range 2000::/3`;
  }
  return undefined;
}

/** The IPv4 address inside an IPv4-mapped, IPv4-translated, NAT64 (64:ff9b::/96) or 6to4 address. */
function embeddedIPv4(ip: ipaddr.IPv6): string | undefined {
  const range = ip.range();
  const bytes = ip.toByteArray();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return bytes.slice(12).join('.');
  if (range === 'rfc6052') {
    // 64:ff9b:1::/48 is for local NAT64 translators only: never a public target.
    return ip.parts[2] === 0 ? bytes.slice(12).join('.') : '0.0.0.0';
  }
  if (range === '6to4') return bytes.slice(2, 6).join('.');
  return undefined;
}

export type HostLookup = (host: string, options: { all: true; verbatim: true }) => Promise<Array<{ address: string; family: number }>>;

/** How long a check resolves the host when its caller gives no limit (a new endpoint's URL: the API, the dashboard, the CLI). */
export const URL_CHECK_TIMEOUT_MS = 5000;

/**
 * Checks a webhook URL: http(s) only, no credentials, and every address the host resolves to must
 * be allowed. Returns the addresses to connect to; throws WebhookUrlRefused otherwise.
 */
export async function checkWebhookUrl(
  raw: string,
  options: {
    allowPrivate: boolean;
    /** How long resolving the host may take (the delivery attempt's own limit); URL_CHECK_TIMEOUT_MS when absent. */
    timeoutMs?: number;
    /** The resolver (node:dns lookup); tests pass one that never answers. */
    lookup?: HostLookup;
    /**
     * One origin (`http://127.0.0.1:4100`) reachable although loopback is refused: `npm start`'s
     * demo receiver, given by cli/start.ts to its own worker for the demo endpoint only. It waives
     * the loopback refusal for a URL of exactly this origin whose host is a loopback IP literal
     * (never a name, so no resolver is asked); any other URL is judged as without it.
     */
    loopbackOrigin?: string;
  },
): Promise<CheckedUrl> {
  const timeoutMs = options.timeoutMs ?? URL_CHECK_TIMEOUT_MS;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlRefused(raw, 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new WebhookUrlRefused(raw, `scheme ${url.protocol} is not http or https`);
  if (url.username !== '' || url.password !== '') throw new WebhookUrlRefused(raw, 'credentials in the URL are not allowed');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (options.loopbackOrigin !== undefined && url.origin === options.loopbackOrigin && isLoopbackLiteral(host)) {
    return { url, addresses: [{ address: host, family: host.includes(':') ? 6 : 4 }] };
  }
  let addresses: Array<{ address: string; family: number }>;
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  } else {
    try {
      const resolve: HostLookup = options.lookup ?? ((name, how) => lookup(name, how));
      addresses = await withinTime(resolve(host, { all: true, verbatim: true }), timeoutMs);
    } catch (error) {
      if (error instanceof TimedOut) throw new WebhookUrlRefused(raw, `cannot resolve ${host} within ${timeoutMs} ms`);
      throw new WebhookUrlRefused(raw, `cannot resolve ${host} (${(error as { code?: string }).code ?? 'error'})`);
    }
    if (addresses.length === 0) throw new WebhookUrlRefused(raw, `${host} resolves to no address`);
  }
  const checked = new Map<string, CheckedAddress>();
  for (const { address, family } of addresses) {
    const why = refusalFor(address, options);
    if (why) throw new WebhookUrlRefused(raw, why);
    checked.set(address, { address, family: family === 6 ? 6 : 4 });
  }
  return { url, addresses: [...checked.values()] };
}

/** An IP address literal in 127.0.0.0/8 or ::1 (not one that merely embeds one). */
function isLoopbackLiteral(host: string): boolean {
  return ipaddr.isValid(host) && ipaddr.parse(host).range() === 'loopback';
}

class TimedOut extends Error {}

/** The promise's value, or a TimedOut rejection after `ms`. */
function withinTime<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new TimedOut()), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface PinnedResponse {
  statusCode: number;
  /** The first `headBytes` bytes of the response body. */
  head: Buffer;
  /** A redirect's `Location` header, as sent (not followed). */
  location?: string;
}

/**
 * Connections to receivers are kept open between attempts (a TLS handshake and a round trip saved
 * per attempt to a busy endpoint), in one pool per set of checked addresses: a pooled connection
 * was opened to one of the addresses a check allowed and only ever serves requests whose check
 * allowed that same set (and, within the pool, the same host, port and TLS server name), so
 * pooling keeps the guarantee above. An idle connection closes after IDLE_CONNECTION_MS, or a
 * second before the receiver's own `Keep-Alive: timeout=` hint when that is shorter (node:http's
 * agent reads it).
 */
const IDLE_CONNECTION_MS = 15_000;
/**
 * Idle connections kept per receiver (host, port and checked addresses): attempts to one endpoint
 * rarely overlap by more (at 50/s with 1.5 ms answers, two connections served them all,
 * bench/webhook-connections); more are opened when needed and closed when done.
 */
const IDLE_CONNECTIONS_PER_RECEIVER = 4;
/**
 * Sets of checked addresses whose pools are kept; the least recently used one's idle connections
 * close. Bounds what idle connections can hold (tens of KiB each over TLS): 256 × 4 at most, only
 * while attempts keep coming within IDLE_CONNECTION_MS.
 */
const POOLED_ADDRESS_SETS = 256;
/**
 * An answer's body is read past its head to its end, so that its connection can serve the next
 * attempt, up to this many bytes in all and within the attempt's time; a longer or slower one drops
 * its connection (the attempt is answered by then).
 */
const DRAINED_BYTES = 64 * 1024;
/**
 * RFC 8305's Connection Attempt Delay: how long node's net.connect (autoSelectFamily) gives one of
 * several addresses before it goes on to the next (at once when it fails; the last one has what is
 * left of the attempt's time).
 */
const NEXT_ADDRESS_AFTER_MS = 250;

const pools = new LRUCache<string, http.Agent>({
  max: POOLED_ADDRESS_SETS,
  dispose: (agent) => {
    // Connections still in use close when their attempt ends; the idle ones now.
    agent.maxFreeSockets = 0;
    for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  },
});

/** The pool for the URL's scheme and its checked addresses (as a set: a resolver may rotate their order). */
function poolFor(checked: CheckedUrl): http.Agent {
  const key = `${checked.url.protocol}${checked.addresses
    .map(({ address }) => address)
    .sort()
    .join(',')}`;
  let pool = pools.get(key);
  if (pool === undefined) {
    const options = { keepAlive: true, timeout: IDLE_CONNECTION_MS, maxFreeSockets: IDLE_CONNECTIONS_PER_RECEIVER, scheduling: 'lifo' as const }; // prettier-ignore
    pool = checked.url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    pools.set(key, pool);
  }
  return pool;
}

/**
 * A failed attempt in words an endpoint's owner can act on (the delivery log shows it), with the
 * status the receiver sent when the failure came after it (`statusCode`, kept in the log).
 */
export class AttemptFailed extends Error {
  constructor(
    message: string,
    readonly statusCode?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

type NodeNetError = NodeJS.ErrnoException & { address?: unknown; reason?: unknown; host?: unknown; cert?: { subjectaltname?: unknown } };

/**
 * What node's error says happened, in plain words: which addresses refused the connection (node's
 * error when none accepted it is an AggregateError with an empty message, its `errors` one per
 * address), a connection closed or reset before or during the answer, an answer that is not HTTP or
 * whose headers are too large, a certificate that does not name the host. `statusCode` is the status
 * the receiver had sent when it happened, if any: the words start with it.
 */
function explained(error: NodeNetError, port: number, statusCode: number | undefined): AttemptFailed {
  const code = typeof error.code === 'string' ? error.code : undefined;
  const after = statusCode !== undefined;
  let what: string;
  // Not `instanceof AggregateError`: node's own realm made it, which need not be the caller's (jest's vm).
  const { errors } = error as { errors?: unknown };
  if (Array.isArray(errors)) {
    const failures = (errors as NodeNetError[]).map(({ address, code, message }) =>
      typeof address === 'string' ? `${address} (${code ?? message})` : message,
    );
    what = `cannot connect to port ${port} at ${failures.join(', ')}`;
  } else if (error.syscall === 'connect' && typeof error.address === 'string') {
    what = `cannot connect to port ${port} at ${error.address} (${code ?? error.message})`;
  } else if (code === 'HPE_HEADER_OVERFLOW') {
    what = `the answer's headers are larger than ${http.maxHeaderSize / 1024} KiB (${code})`;
  } else if (code?.startsWith('HPE_')) {
    what = `the answer is not valid HTTP: ${typeof error.reason === 'string' ? error.reason : error.message} (${code})`;
  } else if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = typeof error.cert?.subjectaltname === 'string' ? error.cert.subjectaltname : 'no host name';
    what = `the TLS certificate does not name ${String(error.host)}: it names ${names} (${code})`;
  } else if (code !== undefined && /CERT|SELF_SIGNED|UNABLE_TO_/.test(code)) {
    what = `the TLS certificate is not trusted: ${error.message} (${code})`;
  } else if (error.message === 'socket hang up' || error.message === 'aborted') {
    // The receiver ended the connection (a FIN): node says `socket hang up` before an answer, `aborted` during one.
    what = after ? "the receiver closed the connection before the answer's end" : 'the receiver closed the connection without answering';
  } else if (code === 'ECONNRESET' || code === 'EPIPE') {
    what = after
      ? `the receiver reset the connection before the answer's end (${code})`
      : `the receiver reset the connection without answering (${code})`;
  } else {
    what = code !== undefined && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return new AttemptFailed(after ? `HTTP ${statusCode} received, then ${what}` : what, statusCode, { cause: error });
}

/**
 * The receiver closed an idle connection just as it was reused (its keep-alive timeout ended): the
 * request never reached it, or reached a server that was closing; node:http's own advice is to send
 * it again. Webhooks are delivered at least once, and consumers dedupe on the event id.
 */
const droppedOnReuse = (error: NodeJS.ErrnoException) => error.code === 'ECONNRESET' || error.code === 'EPIPE';

/**
 * POSTs `body` to the checked URL, connecting to its checked addresses only (a pooled connection to
 * one of them, or a new one). With several addresses, node's net.connect tries them in turn (RFC
 * 8305, NEXT_ADDRESS_AFTER_MS each); when none connects, the error names each address and why.
 * `timeoutMs` bounds the whole exchange (connect, TLS, request, response status and the first
 * `headBytes` body bytes): a receiver that answers its headers at once and then trickles its body
 * fails at the limit, it is not waited for. `limitMs` is the limit the error names when the caller
 * spent part of it already (resolving the host). Redirects are answers like any other status (not
 * followed). A request that a reused connection drops before any answer goes out once more on a new
 * connection, within the same limit. Rejects on a network error or the timeout with an
 * AttemptFailed saying what happened in plain words, and the status when the receiver had sent one.
 */
export function postToCheckedAddress(
  checked: CheckedUrl,
  request: { headers: Record<string, string>; body: Buffer; timeoutMs: number; limitMs?: number; headBytes?: number },
): Promise<PinnedResponse> {
  const headBytes = request.headBytes ?? 512;
  // Answers every name with the checked addresses: node connects to these, and to nothing else.
  const pinnedLookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, checked.addresses);
    else callback(null, checked.addresses[0].address, checked.addresses[0].family);
  };
  const transport = checked.url.protocol === 'https:' ? https : http;
  const port = Number(checked.url.port) || (checked.url.protocol === 'https:' ? 443 : 80);
  const headers = { ...request.headers, 'Content-Length': String(request.body.length), 'User-Agent': 'card-delivery-webhooks/1' };
  return new Promise<PinnedResponse>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      outcome();
    };
    let current: http.ClientRequest;
    /** The status line's code once the receiver has sent it (the failures after it name it). */
    let statusCode: number | undefined;
    // Bounds the answer, then what is left of the body: a connection still busy at the limit is dropped.
    const timer = setTimeout(() => {
      const limit = `no complete answer within ${request.limitMs ?? request.timeoutMs} ms`;
      const awaited = statusCode === undefined ? '' : ` (HTTP ${statusCode} received, the rest of its answer was still awaited)`;
      settle(() => reject(new AttemptFailed(`${limit}${awaited}`, statusCode)));
      current.destroy();
    }, request.timeoutMs);

    const send = (agent: http.Agent | false) => {
      let answered = false;
      // node:http hands socket options to net.connect (its types do not list these two).
      const options: http.RequestOptions & Pick<TcpSocketConnectOpts, 'autoSelectFamily' | 'autoSelectFamilyAttemptTimeout'> = { method: 'POST', lookup: pinnedLookup, autoSelectFamily: true, autoSelectFamilyAttemptTimeout: NEXT_ADDRESS_AFTER_MS, agent, headers }; // prettier-ignore
      const req = transport.request(checked.url, options, (res) => {
        answered = true;
        statusCode = res.statusCode;
        const chunks: Buffer[] = [];
        let size = 0;
        const head = () => Buffer.concat(chunks).subarray(0, headBytes);
        const answer = () => settle(() => resolve({ statusCode: res.statusCode ?? 0, head: head(), location: res.headers.location }));
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (!settled) chunks.push(chunk);
          if (size >= headBytes) answer();
          if (size > DRAINED_BYTES) req.destroy();
        });
        res.on('end', answer);
        res.on('error', (error) => settle(() => reject(explained(error, port, statusCode))));
      });
      current = req;
      req.once('socket', () => {
        if (!req.reusedSocket) webhookConnectionsOpened.inc({ scheme: checked.url.protocol.slice(0, -1) });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (!settled && !answered && req.reusedSocket && droppedOnReuse(error)) send(false);
        else settle(() => reject(explained(error, port, answered ? statusCode : undefined)));
      });
      // Done with this request: its answer read (its connection back in the pool) or its connection gone.
      req.on('close', () => {
        if (req === current && settled) clearTimeout(timer);
      });
      req.end(request.body);
    };
    send(poolFor(checked));
  });
}
