// The SSRF guard (docs/webhooks.md): which webhook URLs are refused, with literal IPs so no DNS
// is needed (plus `localhost`, which every resolver answers locally), and the setting that lifts
// the private-range refusal for development.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { checkWebhookUrl, postToCheckedAddress, URL_CHECK_TIMEOUT_MS, WebhookUrlRefused } from '../../platform/ssrf-guard.js';

const strict = { allowPrivate: false };
const dev = { allowPrivate: true };

async function refusal(url: string, options: Parameters<typeof checkWebhookUrl>[1] = strict): Promise<string> {
  const error = await checkWebhookUrl(url, options).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(WebhookUrlRefused);
  return (error as WebhookUrlRefused).reason;
}

describe('refused targets', () => {
  it.each([
    ['loopback', 'http://127.0.0.1/hook', /loopback/],
    ['loopback, another address of 127/8', 'http://127.5.6.7:8080/hook', /loopback/],
    ['loopback by name', 'http://localhost:3000/hook', /loopback/],
    ['loopback as a decimal integer', 'http://2130706433/hook', /loopback/],
    ['IPv6 loopback', 'http://[::1]/hook', /loopback/],
    ['private 10/8', 'http://10.1.2.3/hook', /private/],
    ['private 172.16/12', 'https://172.31.255.1/hook', /private/],
    ['private 192.168/16', 'http://192.168.1.10/hook', /private/],
    ['link-local 169.254/16', 'http://169.254.10.20/hook', /linkLocal/],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', /metadata/],
    ['cloud metadata over IPv6', 'http://[fd00:ec2::254]/latest/meta-data/', /metadata/],
    ['CGNAT 100.64/10', 'http://100.64.0.1/hook', /carrierGradeNat/],
    ['IPv6 link-local fe80::/10', 'http://[fe80::1]/hook', /linkLocal/],
    ['IPv6 unique-local fc00::/7', 'http://[fd12:3456::1]/hook', /uniqueLocal/],
    ['IPv4 multicast', 'http://224.0.0.1/hook', /multicast/],
    ['IPv6 multicast', 'http://[ff02::1]/hook', /multicast/],
    ['0.0.0.0/8', 'http://0.0.0.0/hook', /unspecified/],
    ['broadcast', 'http://255.255.255.255/hook', /broadcast/],
    ['documentation range 192.0.2/24', 'http://192.0.2.10/hook', /reserved/],
    ['documentation range 2001:db8::/32', 'http://[2001:db8::1]/hook', /reserved/],
    ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/hook', /embeds 127\.0\.0\.1.*loopback/],
    ['IPv4-mapped IPv6 metadata', 'http://[::ffff:169.254.169.254]/hook', /metadata/],
    ['NAT64 of a private address', 'http://[64:ff9b::a00:1]/hook', /embeds 10\.0\.0\.1.*private/],
    ['6to4 of a loopback address', 'http://[2002:7f00:1::1]/hook', /embeds 127\.0\.0\.1.*loopback/],
    ['IPv4-compatible IPv6 (::/96) of loopback', 'http://[::7f00:1]/hook', /IPv4-compatible/],
    ['IPv4-compatible IPv6 (::/96) of the metadata address', 'http://[::a9fe:a9fe]/hook', /IPv4-compatible/],
    ['IPv4-compatible IPv6 (::/96) written dotted', 'http://[::127.0.0.1]/hook', /IPv4-compatible/],
    ['IPv4-compatible IPv6 (::/96) of a public address', 'http://[::808:808]/hook', /IPv4-compatible/],
    ['Azure host address 168.63.129.16 (metadata and DNS)', 'http://168.63.129.16/machine', /metadata/],
    ['IPv4-mapped Azure host address', 'http://[::ffff:168.63.129.16]/hook', /embeds 168\.63\.129\.16.*metadata/],
    ['IPv4-mapped CGNAT address', 'http://[::ffff:100.64.0.1]/hook', /embeds 100\.64\.0\.1.*carrierGradeNat/],
    ['IPv4-translated (::ffff:0:0:0/96) loopback', 'http://[::ffff:0:7f00:1]/hook', /embeds 127\.0\.0\.1.*loopback/],
    ['NAT64 of the metadata address', 'http://[64:ff9b::a9fe:a9fe]/hook', /embeds 169\.254\.169\.254.*metadata/],
    ['NAT64 of the Azure host address', 'http://[64:ff9b::a83f:8110]/hook', /embeds 168\.63\.129\.16.*metadata/],
    ['NAT64 of a CGNAT address', 'http://[64:ff9b::6440:1]/hook', /embeds 100\.64\.0\.1.*carrierGradeNat/],
    ['CGNAT 100.64/10, its last address', 'http://100.127.255.254/hook', /carrierGradeNat/],
    ['IPv6 outside global unicast 2000::/3', 'http://[4000::1]/hook', /not in the global unicast range 2000::\/3/],
  ])('refuses %s (%s)', async (_name, url, reason) => {
    expect(await refusal(url)).toMatch(reason);
  });

  it.each([
    ['a non-http scheme', 'ftp://93.184.215.14/hook', /scheme ftp:/],
    ['a file URL', 'file:///etc/passwd', /scheme file:/],
    ['credentials in the URL', 'https://user:pass@93.184.215.14/hook', /credentials/],
    ['a string that is not a URL', 'not a url', /not a URL/],
  ])('refuses %s', async (_name, url, reason) => {
    expect(await refusal(url)).toMatch(reason);
  });
});

describe('accepted targets', () => {
  it.each([
    ['a public IPv4 address over https', 'https://93.184.215.14/hooks/cards', '93.184.215.14', 4],
    ['a public IPv4 address with a port', 'http://8.8.8.8:8443/hook', '8.8.8.8', 4],
    ['a public IPv6 address', 'https://[2606:4700:4700::1111]/hook', '2606:4700:4700::1111', 6],
    ['NAT64 of a public address', 'https://[64:ff9b::808:808]/hook', '64:ff9b::808:808', 6],
  ])('accepts %s', async (_name, url, address, family) => {
    const checked = await checkWebhookUrl(url, strict);
    expect(checked.addresses).toEqual([{ address, family }]);
    expect(checked.url.toString()).toBe(new URL(url).toString());
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', () => {
  it('lets loopback, private and unique-local targets through', async () => {
    await expect(checkWebhookUrl('http://127.0.0.1:4000/hook', dev)).resolves.toMatchObject({ addresses: [{ address: '127.0.0.1' }] });
    await expect(checkWebhookUrl('http://10.0.0.5/hook', dev)).resolves.toMatchObject({ addresses: [{ address: '10.0.0.5' }] });
    await expect(checkWebhookUrl('http://[fd12::1]/hook', dev)).resolves.toMatchObject({ addresses: [{ address: 'fd12::1' }] });
  });

  it('still refuses cloud metadata, multicast and unspecified addresses', async () => {
    expect(await refusal('http://169.254.169.254/', dev)).toMatch(/metadata/);
    expect(await refusal('http://168.63.129.16/', dev)).toMatch(/metadata/);
    expect(await refusal('http://224.0.0.1/', dev)).toMatch(/multicast/);
    expect(await refusal('http://0.0.0.0:3000/', dev)).toMatch(/unspecified/);
  });

  it('still refuses IPv4-compatible IPv6 (::/96), which no network routes', async () => {
    expect(await refusal('http://[::7f00:1]/', dev)).toMatch(/IPv4-compatible/);
  });
});

// `npm start`'s demo receiver (cli/demo-receiver.ts): its worker may reach that one loopback origin.
describe("loopbackOrigin (npm start's demo receiver)", () => {
  const demo = { allowPrivate: false, loopbackOrigin: 'http://127.0.0.1:4100' };

  it('lets a URL of exactly that origin through, to its loopback address', async () => {
    await expect(checkWebhookUrl('http://127.0.0.1:4100/demo-webhooks', demo)).resolves.toMatchObject({
      addresses: [{ address: '127.0.0.1', family: 4 }],
    });
  });

  it('still refuses another port, host, scheme or name of loopback, and every other private address', async () => {
    for (const url of [
      'http://127.0.0.1:4101/demo-webhooks',
      'http://127.0.0.1/demo-webhooks',
      'https://127.0.0.1:4100/demo-webhooks',
      'http://127.0.0.2:4100/demo-webhooks',
      'http://localhost:4100/demo-webhooks',
      'http://[::1]:4100/demo-webhooks',
      'http://[::ffff:127.0.0.1]:4100/demo-webhooks',
    ])
      expect([url, await refusal(url, demo)]).toEqual([url, expect.stringMatching(/loopback|ipv4Mapped/)]);
    expect(await refusal('http://10.0.0.5:4100/', { allowPrivate: false, loopbackOrigin: 'http://10.0.0.5:4100' })).toMatch(/private/);
    expect(await refusal('http://169.254.169.254/', { allowPrivate: false, loopbackOrigin: 'http://169.254.169.254' })).toMatch(/metadata/);
  });

  it('still refuses credentials in a URL of that origin', async () => {
    expect(await refusal('http://user:pw@127.0.0.1:4100/demo-webhooks', demo)).toMatch(/credentials/);
  });

  it('refuses every loopback or private URL whose origin is not exactly the one allowed', async () => {
    const host = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })).map(([a, b, c]) => `127.${a}.${b}.${c}`), // prettier-ignore
      fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })).map(([a, b]) => `10.${a}.${b}.1`),
      fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })).map(([a, b]) => `192.168.${a}.${b}`),
      fc.constantFrom('[::1]', 'localhost', '[fd00::1]'),
    );
    await fc.assert(
      fc.asyncProperty(host, fc.integer({ min: 1, max: 65535 }), fc.constantFrom('http', 'https'), async (h, port, scheme) => {
        const url = `${scheme}://${h}:${port}/demo-webhooks`;
        fc.pre(new URL(url).origin !== demo.loopbackOrigin);
        const outcome = await checkWebhookUrl(url, demo).then(
          () => 'allowed',
          (error: unknown) => (error instanceof WebhookUrlRefused ? 'refused' : String(error)),
        );
        expect(outcome).toBe('refused');
      }),
      { numRuns: 300 },
    );
  });
});

describe('postToCheckedAddress', () => {
  const hosts: string[] = [];
  const server = http.createServer((req, res) => {
    hosts.push(req.headers.host ?? '');
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  let port: number;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('connects to the checked address, never resolving the name again (no DNS rebinding), and keeps the Host header', async () => {
    // `.invalid` never resolves: the request can only arrive if the pinned address was used.
    const checked = { url: new URL(`http://rebind.invalid:${port}/hook`), addresses: [{ address: '127.0.0.1', family: 4 as const }] };
    const response = await postToCheckedAddress(checked, { headers: {}, body: Buffer.from('{}'), timeoutMs: 2000 });
    expect(response.statusCode).toBe(200);
    expect(response.head.toString()).toBe('ok');
    expect(hosts.at(-1)).toBe(`rebind.invalid:${port}`);
  });
});

describe('checkWebhookUrl within a time limit', () => {
  // DNS is outside the system: a resolver that never answers stands in for one whose server is down.
  const silentResolver = () => new Promise<Array<{ address: string; family: number }>>(() => {});

  it('gives up resolving the host when timeoutMs has passed, so the attempt stays within WEBHOOK_TIMEOUT_MS', async () => {
    const started = Date.now();
    const error = await checkWebhookUrl('https://hooks.example.test/cards', {
      allowPrivate: false,
      timeoutMs: 300,
      lookup: silentResolver,
    }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).toMatch(/cannot resolve hooks\.example\.test within 300 ms/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  // The dashboard's and the operator CLI's checks of a new endpoint give no limit of their own: a
  // resolver that never answers must not hold the form (or the command) for ever.
  it(
    `gives up after URL_CHECK_TIMEOUT_MS (${URL_CHECK_TIMEOUT_MS} ms) when no limit is given`,
    async () => {
      const error = await checkWebhookUrl('https://hooks.example.test/cards', { allowPrivate: false, lookup: silentResolver }).then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).toMatch(new RegExp(`cannot resolve hooks\\.example\\.test within ${URL_CHECK_TIMEOUT_MS} ms`));
    },
    URL_CHECK_TIMEOUT_MS + 5_000,
  );
});
