// Turns the status-read benchmark's rounds into its result: medians per server, the API/bare
// ratio, and the markdown table committed under results/ (the JSON beside it keeps every round).
import type { LoadResult } from './load.js';

export type ServerName = 'api' | 'bare';

export interface Round {
  round: number;
  server: ServerName;
  load: LoadResult;
  /** CPU used during the round, in cores (CPU seconds / wall seconds). */
  cpu: { server: number; load: number; postgres: number | null; machineBusyPercent: number };
}

export interface ServerSummary {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serverCores: number;
  postgresCores: number | null;
  /** Server CPU milliseconds per 1,000 requests. */
  serverCpuMsPerKRequest: number;
}

export interface Result {
  date: string;
  settings: { rows: number; rounds: number; seconds: number; warmupSeconds: number; connections: number };
  environment: Record<string, string | number>;
  checks: Record<string, string | number | boolean>;
  api: ServerSummary;
  bare: ServerSummary;
  /** median API rps / median bare rps */
  ratio: number;
  /** median of each round's API rps / the same round's bare rps */
  pairedRatio: number;
  /** API server CPU per request / bare server CPU per request: the steadiest number on a noisy machine */
  cpuPerRequestRatio: number;
  goal: number;
  rounds: Round[];
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function summarise(rounds: Round[], server: ServerName): ServerSummary {
  const mine = rounds.filter((r) => r.server === server);
  const pg = mine.map((r) => r.cpu.postgres).filter((v): v is number => v !== null);
  return {
    rps: Math.round(median(mine.map((r) => r.load.rps))),
    p50Ms: median(mine.map((r) => r.load.p50Ms)),
    p99Ms: median(mine.map((r) => r.load.p99Ms)),
    serverCores: round2(median(mine.map((r) => r.cpu.server))),
    postgresCores: pg.length ? round2(median(pg)) : null,
    serverCpuMsPerKRequest: round2(median(mine.map((r) => (r.cpu.server * 1e6) / r.load.rps))),
  };
}

export function pairedRatio(rounds: Round[]): number {
  const ratios = [...new Set(rounds.map((r) => r.round))].map((n) => {
    const api = rounds.find((r) => r.round === n && r.server === 'api')!;
    const bare = rounds.find((r) => r.round === n && r.server === 'bare')!;
    return api.load.rps / bare.load.rps;
  });
  return round2(median(ratios));
}

export function toMarkdown(result: Result): string {
  const { api, bare, settings } = result;
  const row = (name: string, s: ServerSummary) =>
    `| ${name} | ${s.rps} | ${s.p50Ms} | ${s.p99Ms} | ${s.serverCores} | ${s.serverCpuMsPerKRequest} | ${s.postgresCores ?? 'n/a'} |`;
  const verdict = result.ratio >= result.goal ? 'meets' : 'is below';
  const lines = [
    `# GET /v1/status/{id}: full API vs bare node:http + pg — ${result.date}`,
    '',
    `${settings.rows.toLocaleString('en')} live dispatches, ${settings.connections} connections, ` +
      `${settings.rounds} alternating rounds × ${settings.seconds} s per server after ${settings.warmupSeconds} s of warm-up; medians over rounds.`,
    '',
    '| server | requests/s | p50 ms | p99 ms | server CPU (cores) | server CPU ms / 1k req | Postgres CPU (cores) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    row('API (startApi, full chain)', api),
    row('bare node:http + pg', bare),
    '',
    `**API / bare = ${result.ratio}×** (median of per-round ratios: ${result.pairedRatio}×); ` +
      `the goal is ≥ ${result.goal}×, which this run ${verdict}. ` +
      `Per request, the API process uses ${result.cpuPerRequestRatio}× the CPU of the bare one.`,
    '',
    '## Rounds',
    '',
    '| round | server | requests/s | p50 ms | p99 ms | non-2xx | errors | server cores | load-generator cores | Postgres cores | machine busy % |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...result.rounds.map(
      (r) =>
        `| ${r.round} | ${r.server} | ${r.load.rps} | ${r.load.p50Ms} | ${r.load.p99Ms} | ${r.load.non2xx} | ${r.load.errors} | ` +
        `${round2(r.cpu.server)} | ${round2(r.cpu.load)} | ${r.cpu.postgres === null ? 'n/a' : round2(r.cpu.postgres)} | ${Math.round(r.cpu.machineBusyPercent)} |`,
    ),
    '',
    '## Checks',
    '',
    ...Object.entries(result.checks).map(([name, value]) => `- ${name}: ${value}`),
    '',
    '## Environment',
    '',
    ...Object.entries(result.environment).map(([name, value]) => `- ${name}: ${value}`),
    '',
  ];
  return lines.join('\n');
}
