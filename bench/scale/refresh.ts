// Part 2: the hourly prediction refresh over a large open book. Seeded as README.md "How the refresh
// part is seeded" says: a transit history for several countries (COPY, as `history import`
// writes it), the dispatches of every country but one written straight into the projection in one
// set-based statement, each row built by the product's own code from the statistics it would read
// (a template per postal code and status, cloned with gen_random_uuid()), and the changed country's
// dispatches registered through the API, so that each has a real running workflow to signal.
// Then three refresh runs, each the workflow the hourly Schedule starts, on the worker:
//   1. idle: nothing changed since the projections were written → nothing signalled;
//   2. after delivered history is added for the changed country → only its moved windows signalled;
//   3. idle again → nothing signalled.
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../../domain/canonical-json.js';
import { copyTransitHistory } from '../../db/transit-history.js';
import { destinationKey, loadTransitStatisticsFor } from '../../db/transit-statistics.js';
import { renderSuggestion } from '../../domain/messages.js';
import { predictFromHistory } from '../../domain/prediction-model.js';
import { dedupeKey, type CurrentStatus } from '../../domain/state-machine.js';
import type { DispatchStatus } from '../../domain/vocabulary.js';
import { buildStatusRecord } from '../../domain/status-record.js';
import { PREDICTION_REFRESH_WORKFLOW_TYPE, type PredictionRefreshSummary } from '../../temporal/contract.js';
import { countryHistory, type CountryPlan } from '../transit-statistics/history.js';
import { inParallel, sleep, startCpuMeter } from '../webhook-latency/load.js';
import { startMemorySampler, type MemoryFigures } from './memory.js';
import { log, registerBatch, TASK_QUEUE, type Stack } from './setup.js';

export interface RefreshSettings {
  /** Open dispatches in all (seeded + registered). */
  open: number;
  /** Of them, registered through the API in the changed country (real workflows). */
  registered: number;
  countries: CountryPlan[];
  changedCountry: string;
  /** Delivered history added to the changed country before run 2, as a share of its rows. */
  changeShare: number;
  /** Median transit (business days) of the added history: slower than the country's. */
  changeMedian: number;
  batchSize: number;
}

export interface RefreshRun {
  label: string;
  seconds: number;
  summary: PredictionRefreshSummary;
  /** Rows Postgres read or updated per table during the run (pg_stat_user_tables deltas). */
  tableRows: Record<string, { read: number; updated: number }>;
  cpu: Record<string, number>;
  machineBusyPercent: number;
  /** Dispatches whose projection version moved after the run (and its signals) settled, by country. */
  versionsMoved: Record<string, number>;
  /** Of the moved ones, how many have the same window and confidence as before (should be 0). */
  movedButSameWindow: number;
  /** History events of a sample of the changed country's workflows, before → after. */
  sampledHistoryEvents: string;
  /**
   * Seconds from the run's end until every signalled workflow had written its new projection, as
   * first seen after the 11 s wait for the table counters (so never below 11).
   */
  settleSeconds: number;
}

export interface RefreshResult {
  open: number;
  seeded: number;
  registered: number;
  historyRows: Record<string, number>;
  changeRows: number;
  seedSeconds: { history: number; projection: number; registration: number };
  templates: number;
  runs: RefreshRun[];
  memory: Record<string, MemoryFigures>;
  checks: Record<string, number | string | boolean>;
}

const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000';

interface Template {
  i: number;
  version: number;
  status: DispatchStatus;
  dispatch_date: string;
  status_since: string;
  dedupe_key: string | null;
  postal_code: string;
  country_code: string;
  registration: string;
  window_min: string;
  window_max: string;
  confidence_level: string;
  record: string;
}

// Row g takes template g % T. One statement writes the projection rows, the prediction log row of
// their version (as upsertProjection does) and, for the in-transit ones, the carrier event that put
// them there (effect applied, as the workflow records it), from which the refresh reads when the
// status began.
const INSERT_SEEDED = `
WITH t AS (
  SELECT * FROM jsonb_to_recordset($3::jsonb) AS t(i int, version bigint, status text, dispatch_date timestamptz, status_since timestamptz,
       dedupe_key text, postal_code text, country_code text, registration text, window_min date, window_max date, confidence_level text, record text)
), rows AS (
  SELECT gen_random_uuid() AS id, t.* FROM generate_series(0, $2::int - 1) AS g JOIN t ON t.i = g % $4::int
), projected AS (
  INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, registration,
                          window_min, window_max, confidence_level, record)
  SELECT id, $1, 'live', version, status, dispatch_date, postal_code, country_code, registration::jsonb,
         window_min, window_max, confidence_level, replace(record, '${PLACEHOLDER_ID}', id::text)::json
    FROM rows
  RETURNING id
), logged AS (
  INSERT INTO prediction_log (dispatch_id, version, status, window_min, window_max, confidence_level)
  SELECT id, version, status, window_min, window_max, confidence_level FROM rows
)
INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at, received_at, effect)
SELECT id, dedupe_key, status, status_since, status_since, 'applied' FROM rows WHERE dedupe_key IS NOT NULL`;

export async function refreshPart(stack: Stack, settings: RefreshSettings): Promise<RefreshResult> {
  const { pool } = stack;
  const memory = startMemorySampler(stack.memory);
  const { issuerId, key } = await stack.newIssuer('Scale bench: refresh');
  const now = new Date();
  const today = now.toISOString().slice(0, 10);

  // 1. History, as `history import` writes it.
  let t0 = performance.now();
  const historyRows: Record<string, number> = {};
  for (const [n, plan] of settings.countries.entries()) {
    historyRows[plan.countryCode] = await copyTransitHistory(pool, toAsync(countryHistory(plan, today, 1000 + n)));
  }
  await pool.query('ANALYZE transit_history');
  const historySeconds = (performance.now() - t0) / 1000;
  log(`refresh: history seeded (${JSON.stringify(historyRows)}) in ${historySeconds.toFixed(1)} s`);

  // 2. Templates: every postal code of the other countries × {dispatched, in transit}, each row as
  //    the projection activity builds it, from the statistics it reads.
  t0 = performance.now();
  const { rows: codes } = await pool.query<{ country_code: string; postal_code: string }>(
    'SELECT DISTINCT country_code, postal_code FROM transit_history WHERE country_code <> $1 ORDER BY 1, 2',
    [settings.changedCountry],
  );
  const dispatchDate = new Date(now.getTime() - 2 * 86_400_000).toISOString();
  const inTransitSince = new Date(now.getTime() - 86_400_000).toISOString();
  const templates: Template[] = [];
  for (let c = 0; c < codes.length; c += 1000) {
    const chunk = codes.slice(c, c + 1000);
    const statistics = await loadTransitStatisticsFor(
      pool,
      chunk.map((d) => ({ countryCode: d.country_code, postalCode: d.postal_code })),
      today,
    );
    for (const d of chunk) {
      const stats = statistics.get(destinationKey({ countryCode: d.country_code, postalCode: d.postal_code }))!;
      const destination = { postal_code: d.postal_code, country_code: d.country_code };
      for (const status of ['dispatched', 'in_transit'] as const) {
        const state: CurrentStatus = { status, statusSince: status === 'dispatched' ? dispatchDate : inTransitSince };
        const prediction = predictFromHistory({ dispatchDate, destination, state, today }, stats);
        const suggestion = renderSuggestion({
          status,
          window: prediction.window,
          confidence: prediction.confidence,
          countryCode: d.country_code,
        });
        const record = buildStatusRecord({ id: PLACEHOLDER_ID, status, dispatchDate, destination, prediction, suggestion });
        templates.push({
          i: templates.length,
          version: status === 'dispatched' ? 1 : 2,
          status,
          dispatch_date: dispatchDate,
          status_since: state.statusSince,
          dedupe_key: status === 'in_transit' ? dedupeKey({ status, occurred_at: inTransitSince }) : null,
          postal_code: d.postal_code,
          country_code: d.country_code,
          // registrationFingerprint of the body { dispatch_date, destination }.
          registration: canonicalJson({ dispatch_date: dispatchDate, destination }),
          window_min: prediction.window.min,
          window_max: prediction.window.max,
          confidence_level: prediction.confidence,
          record: JSON.stringify(record),
        });
      }
    }
  }
  const seeded = settings.open - settings.registered;
  await pool.query(INSERT_SEEDED, [issuerId, seeded, JSON.stringify(templates), templates.length]);
  await pool.query('VACUUM (ANALYZE) dispatches');
  await pool.query('VACUUM (ANALYZE) carrier_events');
  await pool.query('VACUUM (ANALYZE) prediction_log');
  const projectionSeconds = (performance.now() - t0) / 1000;
  log(`refresh: ${seeded} dispatches seeded from ${templates.length} templates in ${projectionSeconds.toFixed(1)} s`);

  // 3. The changed country's dispatches, through the API (real workflows), over its postal codes.
  t0 = performance.now();
  const { rows: changedCodes } = await pool.query<{ postal_code: string }>(
    'SELECT DISTINCT postal_code FROM transit_history WHERE country_code = $1 ORDER BY 1',
    [settings.changedCountry],
  );
  const registeredIds = Array.from({ length: settings.registered }, () => randomUUID());
  for (let i = 0; i < registeredIds.length; i += settings.batchSize) {
    const items = registeredIds.slice(i, i + settings.batchSize).map((id, j) => ({
      id,
      destination: { postal_code: changedCodes[(i + j) % changedCodes.length].postal_code, country_code: settings.changedCountry },
    }));
    await registerBatch(stack.apiUrl, key, items);
    log(
      `refresh: registered ${Math.min(i + settings.batchSize, registeredIds.length)}/${registeredIds.length} in ${settings.changedCountry}`,
    );
  }
  const registrationSeconds = (performance.now() - t0) / 1000;
  await pool.query('ANALYZE dispatches');

  const historySample = registeredIds.filter((_, i) => i % Math.max(1, Math.floor(registeredIds.length / 50)) === 0).slice(0, 50);
  const historyLength = async () => {
    const lengths: number[] = [];
    await inParallel(
      historySample,
      8,
      async (id) => void lengths.push((await stack.temporal.workflow.getHandle(id).fetchHistory()).events?.length ?? 0),
    );
    return lengths.reduce((a, b) => a + b, 0);
  };

  const run = async (label: string): Promise<RefreshRun> => {
    const before = await projectionSnapshot(stack, issuerId);
    const historyBefore = await historyLength();
    // Counters of earlier work reach pg_stat_user_tables within 10 s: start from them.
    await sleep(11_000);
    const tablesBefore = await tableCounters(stack);
    const meter = startCpuMeter(stack.cpu);
    const started = performance.now();
    const summary = await stack.temporal.workflow.execute<() => Promise<PredictionRefreshSummary>>(PREDICTION_REFRESH_WORKFLOW_TYPE, {
      workflowId: `bench-refresh-${label}-${randomUUID()}`,
      taskQueue: TASK_QUEUE,
      args: [],
    });
    const seconds = (performance.now() - started) / 1000;
    const { cores, machineBusyPercent } = meter();
    const ended = performance.now();
    log(`refresh ${label}: ${seconds.toFixed(1)} s, ${JSON.stringify(summary)}`);
    // Idle backends report their table counters within 10 s: rows read by the run, and by the
    // projection writes of the workflows it signalled meanwhile.
    await sleep(11_000);
    const tablesAfter = await tableCounters(stack);
    // The signalled workflows write their new projections after the run: wait for them.
    let after = await projectionSnapshot(stack, issuerId);
    while (movedCount(before, after) < summary.signalled && performance.now() - ended < 300_000) {
      await sleep(500);
      after = await projectionSnapshot(stack, issuerId);
    }
    const settleSeconds = (performance.now() - ended) / 1000;
    const versionsMoved: Record<string, number> = {};
    let movedButSameWindow = 0;
    for (const [id, row] of after) {
      const old = before.get(id)!;
      if (row.version === old.version) continue;
      versionsMoved[row.country] = (versionsMoved[row.country] ?? 0) + 1;
      if (row.window === old.window) movedButSameWindow += 1;
    }
    return {
      label,
      seconds: Math.round(seconds * 10) / 10,
      summary,
      tableRows: Object.fromEntries(
        Object.entries(tablesAfter).map(([table, a]) => [
          table,
          { read: a.read - (tablesBefore[table]?.read ?? 0), updated: a.updated - (tablesBefore[table]?.updated ?? 0) },
        ]),
      ),
      cpu: cores,
      machineBusyPercent,
      versionsMoved,
      movedButSameWindow,
      sampledHistoryEvents: `${historyBefore} → ${await historyLength()} (${historySample.length} workflows)`,
      settleSeconds: Math.round(settleSeconds * 10) / 10,
    };
  };

  const runs = [await run('idle')];
  // The statistics change: slower deliveries to the changed country, dispatched and delivered in
  // the look-back period, mature (every one older than MATURITY_DAYS), as an import would add them.
  const plan = settings.countries.find((c) => c.countryCode === settings.changedCountry)!;
  const changeRows = await copyTransitHistory(
    pool,
    toAsync(countryHistory({ ...plan, rows: Math.round(plan.rows * settings.changeShare), median: settings.changeMedian }, today, 99)),
  );
  await pool.query('ANALYZE transit_history');
  log(`refresh: ${changeRows} slower deliveries added to ${settings.changedCountry}`);
  runs.push(await run('after a statistics change'));
  runs.push(await run('idle again'));

  const [idle, changed, idleAgain] = runs;
  const movedElsewhere = Object.entries(changed.versionsMoved)
    .filter(([country]) => country !== settings.changedCountry)
    .reduce((sum, [, n]) => sum + n, 0);
  const total = (r: RefreshRun) => Object.values(r.versionsMoved).reduce((a, b) => a + b, 0);
  return {
    open: settings.open,
    seeded,
    registered: settings.registered,
    historyRows,
    changeRows,
    seedSeconds: {
      history: Math.round(historySeconds),
      projection: Math.round(projectionSeconds),
      registration: Math.round(registrationSeconds),
    },
    templates: templates.length,
    runs,
    memory: memory.stop(),
    checks: {
      'open dispatches considered by the first run': idle.summary.considered,
      'idle run: dispatches signalled / projections moved': `${idle.summary.signalled} / ${total(idle)}`,
      'change run: signalled / projections moved': `${changed.summary.signalled} / ${total(changed)}`,
      'change run: projections moved outside the changed country': movedElsewhere,
      'change run: moved with the same window and confidence': changed.movedButSameWindow,
      'change run: signalled without a running workflow (missing)': changed.summary.missing,
      'idle run after the change: signalled / projections moved': `${idleAgain.summary.signalled} / ${total(idleAgain)}`,
    },
  };
}

async function* toAsync<T>(rows: Iterable<T>): AsyncIterable<T> {
  yield* rows;
}

type Snapshot = Map<string, { version: string; window: string; country: string }>;

async function projectionSnapshot(stack: Stack, issuerId: string): Promise<Snapshot> {
  // Every open dispatch of the refresh's issuer, and those of the changed country's real ones too.
  const { rows } = await stack.pool.query<{ id: string; version: string; w: string; country_code: string }>(
    `SELECT id, version::text, window_min || ' ' || window_max || ' ' || confidence_level AS w, country_code
       FROM dispatches WHERE issuer_id = $1`,
    [issuerId],
  );
  return new Map(rows.map((r) => [r.id, { version: r.version, window: r.w, country: r.country_code }]));
}

function movedCount(before: Snapshot, after: Snapshot): number {
  let n = 0;
  for (const [id, row] of after) if (before.get(id)?.version !== row.version) n += 1;
  return n;
}

async function tableCounters(stack: Stack): Promise<Record<string, { read: number; updated: number }>> {
  const { rows } = await stack.pool.query<{ relname: string; read: string; updated: string }>(
    `SELECT relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS read, (n_tup_upd + n_tup_ins)::text AS updated
       FROM pg_stat_user_tables WHERE relname IN ('dispatches', 'carrier_events', 'transit_history', 'carrier_conditions', 'prediction_log', 'webhook_events')`,
  );
  return Object.fromEntries(rows.map((r) => [r.relname, { read: Number(r.read), updated: Number(r.updated) }]));
}
