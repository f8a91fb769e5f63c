// `npm run bench:transit-statistics`: how long a projection write waits for its transit statistics
// (db/transit-statistics.ts), in one run on the same embedded Postgres, for destinations in a
// country with FR_ROWS deliveries in its look-back period: without the per-process country cache,
// with the country level read by the statement it had before (test/support reference: the
// per-level statement over every row) and by the current one over counts; through a warm cache;
// on a cache miss; and from an expired entry, served while it is read again. Also where the time
// goes (each country statement alone, the code/prefix/conditions statement alone). Results go to
// results/<date>.md and .json (README.md explains them).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COUNTRY_STATISTICS_TTL_MS, CountryStatisticsCache } from '../../db/country-statistics-cache.js';
import { copyTransitHistory } from '../../db/transit-history.js';
import { migrate } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import { loadCountryStatistics, loadTransitStatistics, type CountryStatistics } from '../../db/transit-statistics.js';
import { loadCountryStatisticsReference } from '../../test/support/country-statistics-reference.js';
import { median } from '../../domain/prediction-quality.js';
import { startPostgres } from '../../devtools/postgres.js';
import { REPO_ROOT } from '../status-read/processes.js';
import { prng } from '../prediction-quality/network.js';
import { countryHistory, type CountryPlan } from './history.js';
import { freeResultsName } from '../results-name.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('BENCH_ROUNDS', 15);
const PLANS: CountryPlan[] = [
  { countryCode: 'FR', rows: env('BENCH_FR_ROWS', 150_000), prefixes: 96, codesPerPrefix: 40, median: 2.2 },
  { countryCode: 'DE', rows: 60_000, prefixes: 90, codesPerPrefix: 30, median: 1.6 },
  { countryCode: 'IT', rows: 40_000, prefixes: 90, codesPerPrefix: 30, median: 3.5 },
];
const RESULTS_DIR = path.join(REPO_ROOT, 'bench/transit-statistics/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const started = Date.now();
const today = new Date().toISOString().slice(0, 10);
const loadAtStart = os.loadavg()[0].toFixed(2);

async function timed<T>(run: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await run();
  return [performance.now() - start, value];
}

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-statistics-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
const pg = await startPostgres({ dataDir: path.join(work, 'pg'), persistent: false });
const pool = createPool(pg.url, { max: 4, applicationName: 'bench-transit-statistics' });
try {
  await migrate(pg.url);
  const rows = await copyTransitHistory(
    pool,
    (async function* () {
      for (const [i, plan] of PLANS.entries()) yield* countryHistory(plan, today, 20261122 + i);
    })(),
  );
  // As autovacuum leaves the table after an import: statistics for the planner, visibility map set.
  await pool.query('VACUUM ANALYZE transit_history');
  const { rows: counts } = await pool.query<{ country_code: string; n: number }>(
    'SELECT country_code, count(*)::int AS n FROM transit_history GROUP BY country_code ORDER BY country_code',
  );
  log(`history: ${rows} deliveries (${counts.map((c) => `${c.country_code} ${c.n}`).join(', ')}) after ${Date.now() - started} ms`);

  // Destinations in the large country: postal codes of busy and quiet areas, and some never seen.
  const random = prng(7);
  const destinations = Array.from({ length: ROUNDS }, (_, i) => ({
    countryCode: 'FR',
    postalCode: `${String(1 + Math.floor(random() * 96)).padStart(2, '0')}${String(i % 3 === 2 ? 999 : Math.floor(random() * 40) * 10).padStart(3, '0')}`, // prettier-ignore
    today,
  }));
  const cache = new CountryStatisticsCache(pool);
  const [missMs] = await timed(() => loadTransitStatistics(pool, destinations[0], cache.source()));
  const precomputed = await loadCountryStatistics(pool, ['FR'], today);
  const fromMemory = async () => new Map<string, CountryStatistics>(precomputed);
  const beforeRewrite = (countries: readonly string[], day: string) => loadCountryStatisticsReference(pool, countries, day);
  const rounds: Array<{ postalCode: string; beforeMs: number; uncachedMs: number; cachedMs: number; expiredMs: number; oldCountryStatementMs: number; countryStatementMs: number; areaStatementMs: number; identical: boolean }> = []; // prettier-ignore
  for (const destination of destinations) {
    // Interleaved, so a burst of other work on the machine hits every variant alike.
    const [beforeMs, before] = await timed(() => loadTransitStatistics(pool, destination, beforeRewrite));
    const [uncachedMs, uncached] = await timed(() => loadTransitStatistics(pool, destination));
    const [cachedMs, cached] = await timed(() => loadTransitStatistics(pool, destination, cache.source()));
    // An entry one TTL old: served at once while the country is read again behind it.
    let now = Date.now();
    const aging = new CountryStatisticsCache(pool, { now: () => new Date(now) });
    await aging.get(['FR'], today);
    now += COUNTRY_STATISTICS_TTL_MS;
    const [expiredMs, expired] = await timed(() => loadTransitStatistics(pool, destination, aging.source()));
    await aging.settled();
    const [oldCountryStatementMs] = await timed(() => loadCountryStatisticsReference(pool, ['FR'], today));
    const [countryStatementMs] = await timed(() => loadCountryStatistics(pool, ['FR'], today));
    const [areaStatementMs] = await timed(() => loadTransitStatistics(pool, destination, fromMemory));
    const same = [before, cached, expired].every((other) => JSON.stringify(other) === JSON.stringify(uncached));
    rounds.push({ postalCode: destination.postalCode, beforeMs, uncachedMs, cachedMs, expiredMs, oldCountryStatementMs, countryStatementMs, areaStatementMs, identical: same }); // prettier-ignore
  }
  const med = (pick: (r: (typeof rounds)[number]) => number) => Math.round(median(rounds.map(pick))! * 10) / 10;
  const result = {
    date: today,
    settings: { rounds: ROUNDS, countries: PLANS },
    summary: {
      'before: uncached, country statement over rows (median ms)': med((r) => r.beforeMs),
      'after: uncached, country statement over counts (median ms)': med((r) => r.uncachedMs),
      'after: warm cache (median ms)': med((r) => r.cachedMs),
      'after: expired entry, served while read again (median ms)': med((r) => r.expiredMs),
      'cache miss: first read of the country in a process (ms)': Math.round(missMs * 10) / 10,
      'country statement over rows alone (median ms)': med((r) => r.oldCountryStatementMs),
      'country statement over counts alone (median ms)': med((r) => r.countryStatementMs),
      'code/prefix/conditions statement alone (median ms)': med((r) => r.areaStatementMs),
      'statistics identical every round (before, uncached, cached, expired)': rounds.every((r) => r.identical),
    },
    environment: {
      'history rows': rows,
      node: process.version,
      cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
      'load average (1 min) at start / end': `${loadAtStart} / ${os.loadavg()[0].toFixed(2)}`,
      'run wall time': `${Math.round((Date.now() - started) / 1000)} s`,
    },
    rounds,
  };
  const markdown = [
    `# transit-statistics, ${today}`,
    '',
    '| measure | value |',
    '| --- | --- |',
    ...Object.entries(result.summary).map(([k, v]) => `| ${k} | ${v} |`),
    ...Object.entries(result.environment).map(([k, v]) => `| ${k} | ${v} |`),
    '',
    '| postal code | before ms | uncached ms | cached ms | expired ms | country over rows ms | country over counts ms | code/prefix ms |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rounds.map((r) => `| FR ${r.postalCode} | ${[r.beforeMs, r.uncachedMs, r.cachedMs, r.expiredMs, r.oldCountryStatementMs, r.countryStatementMs, r.areaStatementMs].map((ms) => ms.toFixed(1)).join(' | ')} |`), // prettier-ignore
    '',
  ].join('\n');
  const name = freeResultsName(RESULTS_DIR, today);
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${markdown}\n`);
  log(`written ${path.relative(REPO_ROOT, RESULTS_DIR)}/${name}.md and .json`);
  if (!result.summary['statistics identical every round (before, uncached, cached, expired)']) process.exitCode = 1;
} finally {
  await pool.end();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
