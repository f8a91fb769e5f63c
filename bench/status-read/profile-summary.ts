// Reads a V8 CPU profile of the API process (BENCH_CPU_PROF=1) and says where its busy time went,
// grouped by layer (Koa, router, pino, pg, node:http, our own files, socket and log writes, GC),
// in % of busy time and in µs per request. Native frames have no URL: a socket write shows as
// `writev`/`writeUtf8String`, a log write as `writeString`. The profiler samples wall time, so a
// thread preempted inside a syscall on a busy machine inflates the "socket write" line.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const KOA =
  /^(koa|koa-compose|delegates|statuses|on-finished|content-type|mime-types|mime-db|type-is|accepts|negotiator|vary|encodeurl|escape-html|http-assert|cookies|keygrip|fresh|only|http-errors|depd|destroy|ee-first|parseurl|media-typer)$/;
const PINO = /^(pino|sonic-boom|@pinojs\/.*|quick-format-unescaped|safe-stable-stringify|atomic-sleep|on-exit-leak-free|thread-stream)$/;

function layer(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) {
    if (['(idle)', '(program)', '(garbage collector)'].includes(functionName)) return functionName;
    if (['writeUtf8String', 'writev', 'writeBuffer', 'writeLatin1String'].includes(functionName)) return 'native: socket write';
    if (functionName === 'writeString') return 'native: log file write';
    return 'native: other';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) {
    if (KOA.test(pkg)) return 'koa';
    if (pkg === '@koa/router' || pkg === 'path-to-regexp') return '@koa/router';
    if (PINO.test(pkg)) return 'pino';
    if (pkg.startsWith('pg')) return 'pg';
    if (pkg === 'tsx' || pkg === 'esbuild') return 'start-up (tsx)';
    return pkg;
  }
  const ours = /\/((?:api|db|domain|platform|bench)\/.*)$/.exec(url)?.[1];
  if (ours) return `ours: ${ours}`;
  if (/^node:(_http|http)/.test(url)) return 'node:http';
  if (/^node:(net|internal\/stream_base|internal\/streams)/.test(url)) return 'node:net + streams';
  if (/^node:internal\/modules/.test(url)) return 'start-up (module loading)';
  if (url.startsWith('node:')) return `node: ${url.slice(5).replace(/^internal\//, '')}`;
  return url;
}

/** Top layers of a profile, as markdown lines; `requests` = requests the process served. */
export function summariseProfile(file: string, requests: number, top = 20): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byLayer = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const name = layer(nodes.get(id)!.callFrame);
    const micros = profile.timeDeltas[i + 1] ?? 0;
    if (name !== '(idle)') busy += micros;
    byLayer.set(name, (byLayer.get(name) ?? 0) + micros);
  });
  byLayer.delete('(idle)');
  const lines = [
    `busy ${(busy / 1e6).toFixed(1)} s over ${requests} requests (${(busy / requests).toFixed(0)} µs/request, start-up included)`,
    '',
  ];
  lines.push('| layer | % of busy | µs / request |', '| --- | ---: | ---: |');
  for (const [name, micros] of [...byLayer].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(`| ${name} | ${((100 * micros) / busy).toFixed(1)} | ${(micros / requests).toFixed(1)} |`);
  }
  return lines;
}
