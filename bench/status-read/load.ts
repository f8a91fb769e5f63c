// The load generator of the status-read and tracking-page benchmarks, run in its own process so
// that it shares no thread with the server it measures: autocannon with N keep-alive connections
// (pipelining 1), each request for a random path: `/v1/status/{id}` of an id of BENCH_IDS_FILE, or a
// path of BENCH_PATHS_FILE (one a line), with BENCH_AUTH as the Bearer key when it is set.
// Env: BENCH_URL, BENCH_IDS_FILE or BENCH_PATHS_FILE, BENCH_AUTH, BENCH_CONNECTIONS, BENCH_SECONDS.
// Prints one JSON line (LoadResult) on stdout. autocannon's own percentiles (p50Ms…maxMs) come from
// a histogram of whole milliseconds (values truncated: 4 ms is 4.0 to 4.99); `precise` holds the
// same percentiles from every response's own duration (autocannon's hrtime, in fractional ms),
// for comparisons at a few milliseconds, where one whole millisecond is 25 % or more.
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
  /** The same percentiles from every response's duration, in ms to the microsecond (nearest rank); the counted responses as autocannon counts them (every status). */
  precise: { p50Ms: number; p90Ms: number; p99Ms: number; maxMs: number; responses: number };
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const paths = process.env.BENCH_PATHS_FILE
  ? lines(process.env.BENCH_PATHS_FILE)
  : lines(process.env.BENCH_IDS_FILE!).map((id) => `/v1/status/${id}`);
const cpuBefore = process.cpuUsage();
/** Every response's duration in ms, as autocannon measured it (before its histogram truncates it). */
let durations = new Float64Array(1 << 16);
let count = 0;
const result = await new Promise<autocannon.Result>((resolve, reject) => {
  const instance = autocannon(
    {
      url: process.env.BENCH_URL!,
      connections: Number(process.env.BENCH_CONNECTIONS ?? 64),
      pipelining: 1,
      duration: Number(process.env.BENCH_SECONDS ?? 10),
      headers: process.env.BENCH_AUTH ? { authorization: `Bearer ${process.env.BENCH_AUTH}` } : {},
      requests: [{ setupRequest: (request) => ({ ...request, path: paths[Math.floor(Math.random() * paths.length)] }) }],
    },
    (error, done) => (error ? reject(error) : resolve(done)),
  );
  instance.on('response', (_client: unknown, _statusCode: number, _bytes: number, ms: number) => {
    if (count === durations.length) {
      const grown = new Float64Array(durations.length * 2);
      grown.set(durations);
      durations = grown;
    }
    durations[count++] = ms;
  });
});
const cpu = process.cpuUsage(cpuBefore);

const sorted = durations.subarray(0, count).sort();
/** Nearest rank: the smallest duration that at least `p` % of the responses do not exceed. */
const percentile = (p: number) => (count === 0 ? 0 : sorted[Math.max(0, Math.ceil((p / 100) * count) - 1)]);
const micro = (ms: number) => Math.round(ms * 1000) / 1000;
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
  precise: {
    p50Ms: micro(percentile(50)),
    p90Ms: micro(percentile(90)),
    p99Ms: micro(percentile(99)),
    maxMs: micro(count === 0 ? 0 : sorted[count - 1]),
    responses: count,
  },
};
process.stdout.write(`${JSON.stringify(output)}\n`);
