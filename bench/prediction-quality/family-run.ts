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
// The previous main's model (BENCH_PREVIOUS, a commit: its domain/ read from git) predicts the same
// cards from the same statistics in the same run, beside this tree's; and each model's shift
// detector is asked about every seen postal code, to count its alarms on areas that did not change.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, chmodSync, writeFileSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { toTransitRecord } from '../../cli/admin/history-commands.js';
import { setCarrierCondition } from '../../db/conditions.js';
import { migrate } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import { copyTransitHistory, type TransitRecord } from '../../db/transit-history.js';
import { destinationKey, loadTransitStatisticsFor } from '../../db/transit-statistics.js';
import * as currentModel from '../../domain/prediction-model.js';
import * as currentChange from '../../domain/recent-change.js';
import { total } from '../../domain/statistics.js';
import { median } from '../../domain/prediction-quality.js';
import { startPostgres } from '../../devtools/postgres.js';
import { REPO_ROOT } from '../status-read/processes.js';
import { drawNetwork, familyHeldOut, familyHistory, todayNetwork, type FamilyDelivery, type FamilyNetwork } from './family.js';
import { familyOracle } from './family-oracle.js';
import { familyMarkdown, scoreNetwork, summariseFamily, type Alarms, type NetworkScore } from './family-report.js';
import { prng } from './network.js';
import { registerSinceExport } from './family-service.js';
import { createIssuer } from '../../db/issuers.js';
import { freeResultsName } from '../results-name.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  shape: process.env.BENCH_SHAPE === 'today' ? 'today' : 'family',
  firstSeed: env('BENCH_SEED', process.env.BENCH_SHAPE === 'today' ? 20261122 : 1),
  networks: env('BENCH_NETWORKS', process.env.BENCH_SHAPE === 'today' ? 1 : 24),
  heldOut: env('BENCH_HELD_OUT', 600),
  historyDays: env('BENCH_HISTORY_DAYS', 365),
  previous: process.env.BENCH_PREVIOUS ?? '3b7507d',
  serviceSinceExport: process.env.BENCH_SERVICE_SINCE_EXPORT === '0' ? 0 : 1,
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

/** A model: the prediction, and its recent-change reading (for the alarms). */
interface Model {
  label: string;
  predictFromHistory: typeof currentModel.predictFromHistory;
  levelPredictives: typeof currentModel.levelPredictives;
  recentChange: typeof currentChange.recentChange;
}

/** The model of `commit`: its domain/ (which imports nothing outside it) from git, beside our node_modules. */
async function modelAt(commit: string, dir: string): Promise<Model> {
  mkdirSync(dir, { recursive: true });
  execFileSync('bash', ['-c', `git -C "${REPO_ROOT}" archive "${commit}" domain package.json | tar -x -C "${dir}"`]);
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const model = (await import(pathToFileURL(path.join(dir, 'domain/prediction-model.ts')).href)) as typeof currentModel;
  const change = (await import(pathToFileURL(path.join(dir, 'domain/recent-change.ts')).href)) as typeof currentChange;
  return { label: `main ${commit}`, predictFromHistory: model.predictFromHistory, levelPredictives: model.levelPredictives, recentChange: change.recentChange }; // prettier-ignore
}

/** Whether the model's shift detector flags the area (suspected or detected), as the prediction reads it. */
function flags(model: Model, stats: currentModel.TransitStatistics, today: string, country: string): boolean {
  if (total(stats.country.fit) === 0) return false;
  const p = model.levelPredictives(stats);
  return model.recentChange(stats, { postalCode: p.code, postalPrefix: p.prefix, country: p.country }, today, country).shift !== null;
}

const iso = (d: FamilyDelivery) => `${d.dispatchDate}T${String(d.hour).padStart(2, '0')}:00:00Z`;

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-family-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
const pg = await startPostgres({ dataDir: path.join(work, 'pg'), persistent: false });
const pool = createPool(pg.url, { max: 4, applicationName: 'bench-family' });
const models: Model[] = [
  { label: 'this tree', predictFromHistory: currentModel.predictFromHistory, levelPredictives: currentModel.levelPredictives, recentChange: currentChange.recentChange }, // prettier-ignore
];
const scores: NetworkScore[][] = [];
try {
  if (settings.previous !== 'none') models.push(await modelAt(settings.previous, path.join(work, 'previous')));
  for (const _ of models) scores.push([]);
  await migrate(pg.url);
  const issuerId = (await createIssuer(pool, 'Family issuer')).id;
  for (let i = 0; i < settings.networks; i += 1) {
    const seed = settings.firstSeed + i;
    const network = networkOf(seed);
    // The history draws, then the held-out cards', from the network's own PRNG stream.
    const random = prng(seed * 7919 + 1);
    await pool.query('TRUNCATE transit_history, carrier_conditions, dispatches CASCADE');
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
    // The service's own registrations since the export (family-service.ts), from a PRNG of their
    // own: the history and the held-out cards stay each seed's. BENCH_SERVICE_SINCE_EXPORT=0: none.
    const service = settings.serviceSinceExport
      ? await registerSinceExport(pool, network, settings.historyDays, issuerId, prng(seed * 7919 + 2))
      : { delivered: 0, onTheirWay: 0 };
    const declared = new Map<string, number>();
    for (const a of network.areas) if (a.disruption) declared.set(`${a.countryCode}:${a.prefix}`, a.disruption.declaredDays);
    for (const [key, delayDays] of declared) {
      const [countryCode, postalPrefix] = key.split(':');
      await setCarrierCondition(pool, { countryCode, postalPrefix, delayDays, until: null });
    }
    const cards = familyHeldOut(network, settings.heldOut, random);
    // Every seen code too, for the alarms: the bulk refresh's statement reads them all at once.
    const seen = network.areas.filter((a) => a.perYear > 0);
    const statistics = await loadTransitStatisticsFor(
      pool,
      [...cards.map((c) => c.area), ...seen].map((a) => ({ countryCode: a.countryCode, postalCode: a.postalCode })),
      network.today,
    );
    const statsOf = (a: FamilyDelivery['area']) =>
      statistics.get(destinationKey({ countryCode: a.countryCode, postalCode: a.postalCode }))!;
    const oracle = familyOracle(network, seed);
    const line: string[] = [];
    models.forEach((model, m) => {
      const predicted = cards.map((c) => {
        const destination = { postal_code: c.area.postalCode, country_code: c.area.countryCode };
        const prediction = model.predictFromHistory({ dispatchDate: iso(c), destination, state: { status: 'dispatched', statusSince: iso(c) }, today: network.today }, statsOf(c.area)); // prettier-ignore
        return { card: c, prediction };
      });
      const alarms: Alarms = { unchanged: 0, unchangedFlagged: 0, changed: 0, changedFlagged: 0 };
      for (const area of seen) {
        const flagged = flags(model, statsOf(area), network.today, area.countryCode) ? 1 : 0;
        if (area.shift !== null) [alarms.changed, alarms.changedFlagged] = [alarms.changed + 1, alarms.changedFlagged + flagged];
        else if (area.disruption === null)
          [alarms.unchanged, alarms.unchangedFlagged] = [alarms.unchanged + 1, alarms.unchangedFlagged + flagged];
      }
      const score = scoreNetwork(seed, network, predicted, historyCount, oracle, alarms);
      scores[m].push(score);
      line.push(`${model.label}: ${score.levels.map((l) => `${l.confidence} ${l.inside}/${l.cards}`).join(', ')}, alarms ${alarms.unchangedFlagged}/${alarms.unchanged} unchanged, ${alarms.changedFlagged}/${alarms.changed} changed`); // prettier-ignore
    });
    log(`${network.name} (export ${network.exportGapDays} days before ${network.today}): ${records.length} deliveries (${refused} refused), service since the export ${service.delivered} delivered and ${service.onTheirWay} on their way, ${cards.length} cards; ${line.join('; ')} after ${elapsed()}`); // prettier-ignore
  }
  const summaries = models.map((model, m) => ({ label: model.label, summary: summariseFamily(scores[m]) }));
  const summary = summaries[0].summary;
  const date = new Date().toISOString().slice(0, 10);
  const markdown = familyMarkdown(summaries, {
    ...settings,
    date,
    load: os.loadavg()[0].toFixed(2),
    wallTime: elapsed(),
    node: process.version,
  });
  const name = freeResultsName(RESULTS_DIR, `${date}-${settings.shape}`);
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  // Per network and level the counts and median widths, not every card's width.
  const networksOf = (list: NetworkScore[]) =>
    list.map(({ levels, ...rest }) => ({
      ...rest,
      levels: levels.map(({ widths, oracleWidths, changedWidths, changedOracleWidths, ...counts }) => ({
        ...counts,
        medianWidth: median(widths),
        oracleMedianWidth: median(oracleWidths),
        changedMedianWidth: median(changedWidths),
        changedOracleMedianWidth: median(changedOracleWidths),
      })),
    }));
  const json = summaries.map(({ label, summary: modelSummary }, m) => ({ label, summary: modelSummary, networks: networksOf(scores[m]) }));
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify({ settings, models: json }, null, 2)}\n`);
  process.stdout.write(`${markdown}\n`);
  log(`written results/${name}.md and .json after ${elapsed()}`);
  if (!summary.goalsMet) process.exitCode = 1;
} finally {
  await pool.end();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
