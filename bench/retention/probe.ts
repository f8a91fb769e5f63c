// `npx tsx bench/retention/probe.ts`: where the retention sweep's cost to live status reads comes
// from (README "What hurt reads"). A smaller run than run.ts, with the sweep's dispatch phase driven
// from this process (the same db/retention.ts, temporal/client.ts and db/erasure.ts calls as
// activities/retention.ts) so each statement of a batch can be timed, beside status reads in short
// windows; Postgres's active backends (autovacuum and parallel workers, wait events) are sampled meanwhile.
// Several pacing plans (batch size x pause) can be compared in one run, each on its own share of the
// backlog after its own baseline windows: the same stack and about the same neighbours for all.
// Reads' percentiles are load.ts's precise ones (fractional ms).
// Env: PROBE_DISPATCHES (20000 per plan), PROBE_PLANS (`200x250,200x600`: batch x pause in ms; else
// PROBE_BATCH (200) and PROBE_PAUSE_MS (0)), PROBE_AT_ONCE (1), PROBE_WINDOW_S (5),
// PROBE_BASELINE_WINDOWS (4), PROBE_LIVE (20000), PROBE_CONNECTIONS (16), PROBE_IDEMPOTENCY_KEYS (0: a
// day's stored responses of registrations made with an Idempotency-Key, each naming a live dispatch),
// PROBE_UNMATCHED_CHECKPOINTS (0: a tracking feed's checkpoints kept for cards never registered).
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eraseDispatchRows } from '../../db/erasure.js';
import type { Pool } from '../../db/pool.js';
import { findDispatchesDue, type DispatchCursor } from '../../db/retention.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { dispatchRunStates } from '../../temporal/client.js';
import { startStack } from '../scale/setup.js';
import { firstJsonLine, startScript } from '../status-read/processes.js';
import { seed as seedLive } from '../status-read/seed.js';
import type { LoadResult } from '../status-read/load.js';
import { startCpuMeter } from '../webhook-latency/load.js';
import { seedCompletedDispatches } from './seed.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  dispatches: env('PROBE_DISPATCHES', 20_000),
  /** Pacing plans tried one after another, each on the next PROBE_DISPATCHES of the backlog: `batch x pause ms`, comma separated. */
  plans: (process.env.PROBE_PLANS ?? `${env('PROBE_BATCH', 200)}x${env('PROBE_PAUSE_MS', 0)}`).split(',').map((plan) => {
    const [batch, pauseMs] = plan.split('x').map(Number);
    return { batch, pauseMs };
  }),
  atOnce: env('PROBE_AT_ONCE', 1),
  windowS: env('PROBE_WINDOW_S', 5),
  baselineWindows: env('PROBE_BASELINE_WINDOWS', 4),
  live: env('PROBE_LIVE', 20_000),
  connections: env('PROBE_CONNECTIONS', 16),
  idempotencyKeys: env('PROBE_IDEMPOTENCY_KEYS', 0),
  unmatchedCheckpoints: env('PROBE_UNMATCHED_CHECKPOINTS', 0),
};
const say = (message: string) => process.stderr.write(`[probe] ${message}\n`);
const DAY = 86_400_000;

/** Statement time per kind, since the last take(). */
const spent = new Map<string, { ms: number; n: number }>();
const note = (kind: string, ms: number) => {
  const entry = spent.get(kind) ?? { ms: 0, n: 0 };
  entry.ms += ms;
  entry.n += 1;
  spent.set(kind, entry);
};
const take = () => {
  const out = Object.fromEntries([...spent].map(([k, v]) => [k, `${Math.round(v.ms)}ms/${v.n}`]));
  spent.clear();
  return out;
};
/**
 * `count` idempotency records as a day of registrations with an Idempotency-Key leaves them: a 201
 * and the status record of a dispatch that is not erased (about 700 bytes); where the schema has
 * `dispatch_ids`, the database derives them from the body.
 */
async function seedStoredResponses(pool: Pool, issuerId: string, count: number): Promise<void> {
  await pool.query(
    `INSERT INTO idempotency_keys (issuer_id, mode, key, request_hash, status_code, headers, body)
     SELECT $1, 'live', 'probe-' || g, 'hash', 201, '{}'::jsonb,
            json_build_object('id', gen_random_uuid(), 'status', 'dispatched', 'message', $3::text)::text
       FROM generate_series(1, $2::int) AS g`,
    [issuerId, count, 'Your card is on its way and should arrive between 1 and 4 December. '.repeat(9)],
  );
}

/**
 * `count` checkpoints a tracking feed of the issuer kept unmatched (kept 30 days): tracking numbers
 * and, for one in three, a reference, of cards never registered here (a provider account that
 * tracks more than this issuer's cards).
 */
async function seedUnmatchedCheckpoints(pool: Pool, issuerId: string, count: number): Promise<void> {
  await pool.query(
    `INSERT INTO tracking_feeds (id, provider, issuer_id, mode, secret) VALUES ('fd_probe', 'easypost', $1, 'live', 'probe')`,
    [issuerId],
  );
  await pool.query(
    `INSERT INTO feed_unmatched_checkpoints (feed_id, issuer_id, mode, tracking_number, references_, event_id, status, time, original)
     SELECT 'fd_probe', $1, 'live', 'EZ' || lpad(g::text, 12, '0'), CASE WHEN g % 3 = 0 THEN ARRAY[gen_random_uuid()::text] ELSE '{}' END,
            'trkdet_' || g, 'in_transit', '{"kind":"instant","at":"2026-11-20T10:00:00Z","original":"2026-11-20T10:00:00Z"}'::jsonb,
            '{"vocabulary":"easypost","status":"in_transit"}'::jsonb
       FROM generate_series(1, $2::int) AS g`,
    [issuerId, count],
  );
}

/** A short name for a statement: its verb and first table. */
const kindOf = (sql: string) => {
  const s = sql.replace(/\s+/g, ' ').trim();
  const m = /^(SELECT|DELETE FROM|UPDATE|INSERT INTO|BEGIN|COMMIT|ROLLBACK)\s*(?:[\w, ]*? FROM )?(\w+)?/i.exec(s);
  if (!m) return s.slice(0, 30);
  if (/^SELECT/i.test(s)) return `select ${/FROM (\w+)/i.exec(s)?.[1] ?? ''}`;
  return `${m[1].toLowerCase()} ${m[2] ?? ''}`.trim();
};

/** The pool, with every statement of a connected client timed. */
function timedPool(pool: Pool): Pool {
  const connect = async () => {
    const client = await pool.connect();
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    return new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver);
        return async (...args: unknown[]) => {
          const started = performance.now();
          try {
            return await query(...args);
          } finally {
            note(kindOf(String(args[0])), performance.now() - started);
          }
        };
      },
    });
  };
  return new Proxy(pool, { get: (t, p, r) => (p === 'connect' ? connect : Reflect.get(t, p, r)) });
}

const stack = await startStack('dev');
try {
  const { issuerId } = await stack.newIssuer('Retention probe: backlog');
  const endpoint = await createWebhookEndpoint(stack.pool, { issuerId, url: 'https://consumer.example/hooks', events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(endpoint.reason);
  let started = performance.now();
  await seedCompletedDispatches(stack.pool, {
    issuerId,
    endpointId: endpoint.endpoint.id,
    count: settings.dispatches * settings.plans.length,
    lastChangeAgoMs: 200 * DAY,
  });
  const live = await seedLive(stack.pool, settings.live);
  if (settings.idempotencyKeys > 0) await seedStoredResponses(stack.pool, issuerId, settings.idempotencyKeys);
  if (settings.unmatchedCheckpoints > 0) await seedUnmatchedCheckpoints(stack.pool, issuerId, settings.unmatchedCheckpoints);
  await stack.pool.query('VACUUM (ANALYZE)');
  say(
    `seeded ${settings.dispatches} + ${settings.live} in ${Math.round(performance.now() - started)} ms; settings ${JSON.stringify(settings)}`,
  );

  const idsFile = path.join(os.tmpdir(), `cds-probe-ids-${process.pid}.txt`);
  writeFileSync(idsFile, live.ids.join('\n'));
  const window = async () => {
    const child = startScript('../status-read/load.ts', {
      BENCH_URL: stack.apiUrl,
      BENCH_IDS_FILE: idsFile,
      BENCH_AUTH: live.key,
      BENCH_CONNECTIONS: String(settings.connections),
      BENCH_SECONDS: String(settings.windowS),
    });
    const meter = startCpuMeter(stack.cpu);
    const r = await firstJsonLine<LoadResult>(child, 'load');
    return { ...r, ...meter(), load: os.loadavg()[0] };
  };

  // Postgres activity, sampled every 250 ms: autovacuum workers (and what they vacuum), waits.
  const seen = new Map<string, number>();
  const monitorPool = stack.pool;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await monitorPool.query<{ what: string }>(
        `SELECT coalesce(a.backend_type, '') || ':' || coalesce(a.wait_event_type || '/' || a.wait_event, 'cpu') ||
                CASE WHEN a.backend_type = 'autovacuum worker' THEN ' ' || coalesce(substring(a.query from '(?:VACUUM|ANALYZE)[^;]*'), '')
                     WHEN a.backend_type = 'parallel worker' THEN ' for ' || left(regexp_replace(coalesce(l.query, ''), '\\s+', ' ', 'g'), 60)
                     ELSE '' END AS what
           FROM pg_stat_activity a LEFT JOIN pg_stat_activity l ON l.pid = a.leader_pid
          WHERE a.state = 'active' AND a.pid <> pg_backend_pid() AND a.backend_type <> 'walwriter'`,
      );
      for (const { what } of rows) seen.set(what, (seen.get(what) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const takeSeen = () => {
    const out = Object.fromEntries([...seen].sort((a, b) => b[1] - a[1]).slice(0, 8));
    seen.clear();
    return out;
  };

  const pool = timedPool(stack.pool);
  /** The walk's cursor, shared by the plans: each erases the next `settings.dispatches`. */
  let after: DispatchCursor | undefined;
  const summaries: string[] = [];
  for (const plan of settings.plans) {
    const name = `${plan.batch}×${plan.pauseMs}ms`;
    const baseline: LoadResult[] = [];
    for (let i = 0; i < settings.baselineWindows; i++) {
      const w = await window();
      baseline.push(w);
      say(`${name} baseline ${i + 1}: p99 ${w.precise.p99Ms} ms p50 ${w.precise.p50Ms} ${w.rps}/s cores ${JSON.stringify(w.cores)} load ${w.load.toFixed(1)} pg ${JSON.stringify(takeSeen())}`); // prettier-ignore
    }
    take();

    let done = false;
    let batches = 0;
    let erased = 0;
    const sweep = (async () => {
      while (erased < settings.dispatches) {
        let t = performance.now();
        const due = await findDispatchesDue(stack.pool, {
          windowMs: 180 * DAY,
          deliveredRetentionMs: 7 * DAY,
          exceptionRetentionMs: 30 * DAY,
          limit: Math.min(plan.batch * settings.atOnce, settings.dispatches - erased),
          after,
        });
        note('findDispatchesDue', performance.now() - t);
        if (due.ids.length === 0) break;
        const parts = Array.from({ length: Math.ceil(due.ids.length / plan.batch) }, (_, i) =>
          due.ids.slice(i * plan.batch, (i + 1) * plan.batch),
        );
        await Promise.all(
          parts.map(async (ids) => {
            t = performance.now();
            const runs = await dispatchRunStates(stack.temporal, ids);
            note('temporal visibility', performance.now() - t);
            t = performance.now();
            await eraseDispatchRows(
              pool,
              ids.filter((id) => runs.get(id) !== 'running'),
            );
            note('eraseDispatchRows (whole)', performance.now() - t);
            batches++;
          }),
        );
        erased += due.ids.length;
        if (!due.next) break;
        after = due.next;
        if (plan.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, plan.pauseMs));
      }
    })().finally(() => (done = true));
    started = performance.now();
    const during: LoadResult[] = [];
    while (!done) {
      const before = batches;
      const w = await window();
      during.push(w);
      say(`${name} sweep ${during.length} (${Math.round((performance.now() - started) / 1000)} s, ${batches - before} batches): p99 ${w.precise.p99Ms} ms p50 ${w.precise.p50Ms} ${w.rps}/s cores ${JSON.stringify(w.cores)} load ${w.load.toFixed(1)}`); // prettier-ignore
      say(`   statements ${JSON.stringify(take())}`);
      say(`   pg ${JSON.stringify(takeSeen())}`);
    }
    await sweep;
    const sweepS = (performance.now() - started) / 1000;
    const p99 = (ws: LoadResult[]) => ws.map((w) => w.precise.p99Ms);
    const base = Math.max(...p99(baseline));
    const summary = `${name}: ${erased} in ${sweepS.toFixed(1)} s (${((sweepS * 100_000) / Math.max(1, erased)).toFixed(0)} s per 100,000); baseline p99 ${p99(baseline).join(', ')}; during ${p99(during).join(', ')}; worst/max-baseline ${(Math.max(...p99(during)) / base).toFixed(2)}×`; // prettier-ignore
    summaries.push(summary);
    say(summary);
  }
  sampling = false;
  await sampler;
  for (const summary of summaries) say(summary);
} finally {
  await stack.stop();
}
