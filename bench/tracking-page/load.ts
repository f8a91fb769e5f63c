// The tracking-page benchmark's load generator, run in its own process: autocannon with N
// keep-alive connections (pipelining 1), each request for a random path of BENCH_PATHS_FILE (one
// path a line: /v1/status/{id} or /t/{token}), with BENCH_AUTH as the Bearer key when it is set.
// Env: BENCH_URL, BENCH_PATHS_FILE, BENCH_AUTH (optional), BENCH_CONNECTIONS, BENCH_SECONDS.
// Prints one JSON line (LoadResult of bench/status-read/load.ts) on stdout.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { LoadResult } from '../status-read/load.js';

const paths = readFileSync(process.env.BENCH_PATHS_FILE!, 'utf8').split('\n').filter(Boolean);
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: process.env.BENCH_URL!,
  connections: Number(process.env.BENCH_CONNECTIONS ?? 64),
  pipelining: 1,
  duration: Number(process.env.BENCH_SECONDS ?? 10),
  headers: process.env.BENCH_AUTH ? { authorization: `Bearer ${process.env.BENCH_AUTH}` } : {},
  requests: [{ setupRequest: (request) => ({ ...request, path: paths[Math.floor(Math.random() * paths.length)] }) }],
});
const cpu = process.cpuUsage(cpuBefore);

const output: LoadResult = {
  rps: Math.round(result['2xx'] / result.duration),
  p50Ms: result.latency.p50,
  p90Ms: result.latency.p90,
  p99Ms: result.latency.p99,
  maxMs: result.latency.max,
  ok: result['2xx'],
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  seconds: result.duration,
  cpuS: (cpu.user + cpu.system) / 1e6,
};
process.stdout.write(`${JSON.stringify(output)}\n`);
