// The load generator of the status-read and tracking-page benchmarks, run in its own process so
// that it shares no thread with the server it measures: autocannon with N keep-alive connections
// (pipelining 1), each request for a random path: `/v1/status/{id}` of an id of BENCH_IDS_FILE, or a
// path of BENCH_PATHS_FILE (one a line), with BENCH_AUTH as the Bearer key when it is set.
// Env: BENCH_URL, BENCH_IDS_FILE or BENCH_PATHS_FILE, BENCH_AUTH, BENCH_CONNECTIONS, BENCH_SECONDS.
// Prints one JSON line (LoadResult) on stdout.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadResult {
  /** 2xx responses per second over the whole run. */
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  /** CPU time of this load-generator process during the run, in seconds. */
  cpuS: number;
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const paths = process.env.BENCH_PATHS_FILE
  ? lines(process.env.BENCH_PATHS_FILE)
  : lines(process.env.BENCH_IDS_FILE!).map((id) => `/v1/status/${id}`);
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
