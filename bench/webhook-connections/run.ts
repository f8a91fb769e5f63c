// bench/webhook-connections: what a webhook attempt costs the worker, and the receiver, over TLS,
// with this tree's connection pool (platform/ssrf-guard.ts postToCheckedAddress keeps connections
// to a receiver open) beside the previous main's fresh connection per attempt: the same attempts,
// each side in its own process, alternating which goes first, in one run. See README.md.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { selfSignedCertificate } from '../../test/support/certificate.js';
import { median } from '../status-read/report.js';
import { percentile } from '../webhook-latency/breakdown.js';
import { freeResultsName } from '../results-name.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, '../..');
const settings = {
  previous: process.env.BENCH_PREVIOUS ?? '0a47dcb',
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  attempts: Number(process.env.BENCH_ATTEMPTS ?? 1000),
  rate: Number(process.env.BENCH_RATE ?? 50),
  warmup: Number(process.env.BENCH_WARMUP ?? 50),
};
const resultsDir = process.env.BENCH_RESULTS_DIR ?? path.join(HERE, 'results');

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-connections-'));
const pems = await selfSignedCertificate('hooks.bench.invalid');
const keyPath = path.join(work, 'key.pem');
const certPath = path.join(work, 'cert.pem');
writeFileSync(keyPath, pems.key);
writeFileSync(certPath, pems.cert);

// The previous main's module (it imports node's own modules and ipaddr.js), beside our node_modules.
const previousDir = path.join(work, 'previous');
mkdirSync(previousDir);
execFileSync('bash', ['-c', `git -C "${REPO_ROOT}" archive "${settings.previous}" platform/ssrf-guard.ts | tar -x -C "${previousDir}"`]);
symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(previousDir, 'node_modules'));
const sides = [
  { label: `main ${settings.previous}`, module: path.join(previousDir, 'platform/ssrf-guard.ts') },
  { label: 'this tree', module: path.join(REPO_ROOT, 'platform/ssrf-guard.ts') },
];

const receiver = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'receiver.ts'), keyPath, certPath], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise<number>((resolve, reject) => {
  receiver.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
  receiver.once('exit', (code) => reject(new Error(`receiver exited (${code})`)));
});

interface Stats {
  cpuUs: number;
  connections: number;
  requests: number;
}
const stats = () =>
  new Promise<Stats>((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path: '/stats', servername: 'hooks.bench.invalid', ca: pems.cert, agent: false }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(JSON.parse(text) as Stats));
      })
      .on('error', reject);
  });

interface Measure {
  side: string;
  round: number;
  clientCpuUsPerAttempt: number;
  receiverCpuUsPerAttempt: number;
  connections: number;
  p50Ms: number;
  p99Ms: number;
}

const measures: Measure[] = [];
const load = { start: os.loadavg()[0], end: 0 };
try {
  for (let round = 1; round <= settings.rounds; round += 1) {
    for (const side of round % 2 === 1 ? sides : [...sides].reverse()) {
      const before = await stats();
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', path.join(HERE, 'client.ts'), side.module, String(port), String(settings.attempts), String(settings.rate), String(settings.warmup)], // prettier-ignore
        { env: { ...process.env, NODE_EXTRA_CA_CERTS: certPath }, maxBuffer: 64 * 1024 * 1024 },
      );
      const after = await stats();
      const client = JSON.parse(stdout) as { cpuUs: number; times: number[] };
      const requests = after.requests - before.requests;
      measures.push({
        side: side.label,
        round,
        clientCpuUsPerAttempt: client.cpuUs / settings.attempts,
        // The receiver's CPU over every attempt of the side (warm-up included), less nothing: the two
        // /stats requests cost the same on both sides.
        receiverCpuUsPerAttempt: (after.cpuUs - before.cpuUs) / requests,
        // Less the /stats request's own connection.
        connections: after.connections - before.connections - 1,
        p50Ms: median(client.times),
        p99Ms: percentile(client.times, 0.99),
      });
      const m = measures.at(-1)!;
      console.log(`round ${round} ${side.label}: client ${m.clientCpuUsPerAttempt.toFixed(0)} µs, receiver ${m.receiverCpuUsPerAttempt.toFixed(0)} µs per attempt, ${m.connections} connections, p50 ${m.p50Ms.toFixed(2)} ms, p99 ${m.p99Ms.toFixed(2)} ms`); // prettier-ignore
    }
  }
} finally {
  receiver.kill();
  load.end = os.loadavg()[0];
  rmSync(work, { recursive: true, force: true });
}

const summary = sides.map(({ label }) => {
  const own = measures.filter((m) => m.side === label);
  return {
    side: label,
    clientCpuUsPerAttempt: median(own.map((m) => m.clientCpuUsPerAttempt)),
    receiverCpuUsPerAttempt: median(own.map((m) => m.receiverCpuUsPerAttempt)),
    connections: median(own.map((m) => m.connections)),
    p50Ms: median(own.map((m) => m.p50Ms)),
    p99Ms: median(own.map((m) => m.p99Ms)),
  };
});
const [previous, current] = summary;
const ratio = (key: keyof (typeof summary)[number]) => (current[key] as number) / (previous[key] as number);
const row = (name: string, key: keyof (typeof summary)[number], digits: number) =>
  `| ${name} | ${(previous[key] as number).toFixed(digits)} | ${(current[key] as number).toFixed(digits)} | ${ratio(key).toFixed(2)} |`;

const date = new Date().toISOString().slice(0, 10);
const name = freeResultsName(resultsDir, date, process.env.BENCH_RESULTS_NAME);
const report = [
  `# webhook-connections ${name}`,
  '',
  `${settings.attempts} HTTPS webhook attempts per side and round at ${settings.rate}/s (after ${settings.warmup} not counted), ${settings.rounds} rounds, sides alternating; ` +
    `${os.cpus().length} cores, load average ${load.start.toFixed(2)} → ${load.end.toFixed(2)}. Medians of the rounds.`,
  '',
  `| per attempt (medians of ${settings.rounds} rounds) | ${previous.side} | ${current.side} | ratio |`,
  '| --- | ---: | ---: | ---: |',
  row('client (worker) CPU, µs', 'clientCpuUsPerAttempt', 0),
  row('receiver CPU, µs', 'receiverCpuUsPerAttempt', 0),
  row('p50 time to the answer, ms', 'p50Ms', 2),
  row('p99 time to the answer, ms', 'p99Ms', 2),
  row('connections opened', 'connections', 0),
  '',
  '| round | side | client µs | receiver µs | connections | p50 ms | p99 ms |',
  '| ---: | --- | ---: | ---: | ---: | ---: | ---: |',
  ...measures.map(
    (m) =>
      `| ${m.round} | ${m.side} | ${m.clientCpuUsPerAttempt.toFixed(0)} | ${m.receiverCpuUsPerAttempt.toFixed(0)} | ${m.connections} | ${m.p50Ms.toFixed(2)} | ${m.p99Ms.toFixed(2)} |`,
  ),
  '',
].join('\n');
writeFileSync(path.join(resultsDir, `${name}.md`), report);
writeFileSync(path.join(resultsDir, `${name}.json`), `${JSON.stringify({ settings, load, summary, measures }, null, 2)}\n`);
console.log(report);
