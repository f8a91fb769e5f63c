// One side of bench/webhook-connections, in its own process: `postToCheckedAddress` of the module
// given (this tree's platform/ssrf-guard.ts, or the previous main's), `attempts` webhook attempts to
// the receiver at `rate` per second (open loop, after `warmup` not counted), each with a body and
// headers the size of a real delivery's. Prints its CPU (µs, this process) over the measured
// attempts and each attempt's time to its answer (ms). The receiver's certificate is trusted through
// NODE_EXTRA_CA_CERTS: verification stays on, as in production.
import { pathToFileURL } from 'node:url';
import type { CheckedUrl, PinnedResponse } from '../../platform/ssrf-guard.js';

const [modulePath, port, attempts, rate, warmup] = process.argv.slice(2);
const { postToCheckedAddress } = (await import(pathToFileURL(modulePath).href)) as {
  postToCheckedAddress: (checked: CheckedUrl, request: { headers: Record<string, string>; body: Buffer; timeoutMs: number }) => Promise<PinnedResponse>; // prettier-ignore
};
// `address` and `family`: what the previous main's module reads.
const checked: CheckedUrl & { address: string; family: 4 } = {
  url: new URL(`https://hooks.bench.invalid:${port}/cards`),
  addresses: [{ address: '127.0.0.1', family: 4 }],
  address: '127.0.0.1',
  family: 4,
};
const body = Buffer.from(
  JSON.stringify({ id: 'evt_'.padEnd(40, '0'), type: 'dispatch.status_changed', data: { padding: 'x'.repeat(900) } }),
);
const headers = {
  'Content-Type': 'application/json',
  'Webhook-Id': 'evt_'.padEnd(40, '0'),
  'Webhook-Timestamp': '1796000000',
  'Webhook-Signature': `v1,${'A'.repeat(44)}`,
};

async function send(count: number, perSecond: number): Promise<number[]> {
  const started = performance.now();
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const due = started + (i * 1000) / perSecond;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      const sent = performance.now();
      const response = await postToCheckedAddress(checked, { headers, body, timeoutMs: 5000 });
      if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}`);
      return performance.now() - sent;
    }),
  );
}

await send(Number(warmup), Number(rate));
const before = process.cpuUsage();
const times = await send(Number(attempts), Number(rate));
const cpu = process.cpuUsage(before);
process.stdout.write(`${JSON.stringify({ cpuUs: cpu.user + cpu.system, times })}\n`);
// Pooled connections are unref'd, the previous main's are closed: nothing keeps this process up.
