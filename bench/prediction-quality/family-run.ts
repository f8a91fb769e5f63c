// The family run of `npm run bench:prediction-quality` (README.md "A family of networks"): for each
// of BENCH_NETWORKS seeds, a network drawn by family.ts (or, with BENCH_SHAPE=today, network.ts's
// network), its history through the import's own row parsing (cli/admin/history-commands.ts
// toTransitRecord: ISO timestamps → business days) and COPY (db/transit-history.ts), its declared
// disruptions as `conditions set` stores them, then every held-out card's prediction from the
// statistics the service reads (db/transit-statistics.ts loadTransitStatisticsFor, the bulk
// refresh's statement) and the service's model (domain/prediction-model.ts predictFromHistory),
// compared with the card's simulated delivery and with the oracle's narrowest window.
// In process, against one embedded Postgres: the API and the worker only carry these figures
// (BENCH_SHAPE=today BENCH_SERVICE=1 runs today's network through them, service-run.ts).
import { mkdirSync, mkdtempSync, rmSync, chmodSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { toTransitRecord } from '../../cli/admin/history-commands.js';
import { setCarrierCondition } from '../../db/conditions.js';
import { migrate } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import { copyTransitHistory, type TransitRecord } from '../../db/transit-history.js';
import { destinationKey, loadTransitStatisticsFor } from '../../db/transit-statistics.js';
import { predictFromHistory } from '../../domain/prediction-model.js';
import { median } from '../../domain/prediction-quality.js';
import { startPostgres } from '../../devtools/postgres.js';
import { REPO_ROOT } from '../status-read/processes.js';
import { drawNetwork, familyHeldOut, familyHistory, todayNetwork, type FamilyDelivery, type FamilyNetwork } from './family.js';
import { familyOracle } from './family-oracle.js';
import { familyMarkdown, scoreNetwork, summariseFamily, type NetworkScore } from './family-report.js';
import { prng } from './network.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  shape: process.env.BENCH_SHAPE === 'today' ? 'today' : 'family',
  firstSeed: env('BENCH_SEED', process.env.BENCH_SHAPE === 'today' ? 20261122 : 1),
  networks: env('BENCH_NETWORKS', process.env.BENCH_SHAPE === 'today' ? 1 : 24),
  heldOut: env('BENCH_HELD_OUT', 600),
  historyDays: env('BENCH_HISTORY_DAYS', 365),
};
// BENCH_RESULTS_DIR for trial runs, so that they do not land beside the recorded results.
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? path.join(REPO_ROOT, 'bench/prediction-quality/results');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;

function networkOf(seed: number): FamilyNetwork {
  const random = prng(seed);
  // Today's network is dated from the run's day, as service-run.ts does; a family network from its seed.
  return settings.shape === 'today' ? todayNetwork(random, new Date().toISOString().slice(0, 10)) : drawNetwork(seed, random);
}

const iso = (d: FamilyDelivery) => `${d.dispatchDate}T${String(d.hour).padStart(2, '0')}:00:00Z`;

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-family-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
const pg = await startPostgres({ dataDir: path.join(work, 'pg'), persistent: false });
const pool = createPool(pg.url, { max: 4, applicationName: 'bench-family' });
const scores: NetworkScore[] = [];
try {
  await migrate(pg.url);
  for (let i = 0; i < settings.networks; i += 1) {
    const seed = settings.firstSeed + i;
    const network = networkOf(seed);
    // The history draws, then the held-out cards', from the network's own PRNG stream.
    const random = prng(seed * 7919 + 1);
    await pool.query('TRUNCATE transit_history, carrier_conditions');
    const historyCount = new Map<string, number>();
    const records: TransitRecord[] = [];
    let refused = 0;
    for (const d of familyHistory(network, settings.historyDays, random)) {
      const record = toTransitRecord({ postal_code: d.area.postalCode, country_code: d.area.countryCode, dispatch_date: iso(d), delivered_date: d.deliveredDate }); // prettier-ignore
      // Refused as the import refuses it (a card lost for months): not in the history, as in production.
      if ('reason' in record) {
        refused += 1;
        continue;
      }
      records.push(record);
      const key = `${d.area.countryCode}:${d.area.postalCode}`;
      historyCount.set(key, (historyCount.get(key) ?? 0) + 1);
    }
    await copyTransitHistory(
      pool,
      (async function* () {
        yield* records;
      })(),
    );
    const declared = new Map<string, number>();
    for (const a of network.areas) if (a.disruption) declared.set(`${a.countryCode}:${a.prefix}`, a.disruption.declaredDays);
    for (const [key, delayDays] of declared) {
      const [countryCode, postalPrefix] = key.split(':');
      await setCarrierCondition(pool, { countryCode, postalPrefix, delayDays, until: null });
    }
    const cards = familyHeldOut(network, settings.heldOut, random);
    const statistics = await loadTransitStatisticsFor(
      pool,
      cards.map((c) => ({ countryCode: c.area.countryCode, postalCode: c.area.postalCode })),
      network.today,
    );
    const predicted = cards.map((c) => {
      const stats = statistics.get(destinationKey({ countryCode: c.area.countryCode, postalCode: c.area.postalCode }))!;
      const destination = { postal_code: c.area.postalCode, country_code: c.area.countryCode };
      const prediction = predictFromHistory({ dispatchDate: iso(c), destination, state: { status: 'dispatched', statusSince: iso(c) }, today: network.today }, stats); // prettier-ignore
      return { card: c, prediction };
    });
    const score = scoreNetwork(seed, network, predicted, historyCount, familyOracle(network, seed));
    scores.push(score);
    log(`${network.name}: ${records.length} deliveries (${refused} refused), ${cards.length} cards, ${score.levels.map((l) => `${l.confidence} ${l.inside}/${l.cards}`).join(', ')} after ${elapsed()}`); // prettier-ignore
  }
  const summary = summariseFamily(scores);
  const date = new Date().toISOString().slice(0, 10);
  const markdown = familyMarkdown(summary, {
    ...settings,
    date,
    load: os.loadavg()[0].toFixed(2),
    wallTime: elapsed(),
    node: process.version,
  });
  mkdirSync(RESULTS_DIR, { recursive: true });
  const base = `${date}-${settings.shape}`;
  let name = base;
  for (let run = 2; existsSync(path.join(RESULTS_DIR, `${name}.md`)); run += 1) name = `${base}-${run}`;
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  // Per network and level the counts and median widths, not every card's width.
  const networks = scores.map(({ levels, ...rest }) => ({
    ...rest,
    levels: levels.map(({ widths, oracleWidths, ...counts }) => ({
      ...counts,
      medianWidth: median(widths),
      oracleMedianWidth: median(oracleWidths),
    })),
  }));
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify({ settings, summary, networks }, null, 2)}\n`);
  process.stdout.write(`${markdown}\n`);
  log(`written results/${name}.md and .json after ${elapsed()}`);
  if (!summary.goalsMet) process.exitCode = 1;
} finally {
  await pool.end();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
