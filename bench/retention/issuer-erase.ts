// `npx tsx bench/retention/issuer-erase.ts`: how long `issuer erase` takes per dispatch, the way it
// was (a workflow per dispatch, `eraseDispatch` and wait, 8 at a time) and the way it is
// (ingest/erasure.ts `eraseAtOnce`: batches of 200), in one run on one stack: embedded Postgres, the
// Temporal dev server, the product worker and API (bench/scale/setup.ts). BENCH_DISPATCHES (200) +
// BENCH_BATCHED_DISPATCHES (1,000: several batches) dispatches of one issuer are registered through
// the API, so each has a running workflow (the worst case: every run open, so every batch waits for
// activities); the first are erased the old way, the others the new, each timed, then every one is
// checked: no projection row, a completed erasure, and for a sample of 20 a footprint of 0 in every
// table and no Temporal run. Writes results/<date>-issuer-erase.{md,json}.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dispatchFootprint } from '../../db/erasure.js';
import { eraseAtOnce, eraseDispatch, type ErasureDeps } from '../../ingest/erasure.js';
import { erasureWorkflowId } from '../../temporal/contract.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { freeResultsName } from '../results-name.js';
import { startStack, TASK_QUEUE } from '../scale/setup.js';

const DISPATCHES = Number(process.env.BENCH_DISPATCHES ?? 200);
const BATCHED = Number(process.env.BENCH_BATCHED_DISPATCHES ?? 1_000);
/** What `issuer erase` ran at once before eraseAtOnce. */
const WORKFLOWS_AT_ONCE = 8;
const WEBHOOK_TIMEOUT_MS = 5_000; // the worker's default, which the erasures wait for
const say = (message: string) => process.stderr.write(`[issuer-erase] ${message}\n`);

const stack = await startStack('dev');
try {
  const { issuerId, key } = await stack.newIssuer('Leaving Issuer');
  say(`registering ${DISPATCHES + BATCHED} dispatches`);
  const ids: string[] = [];
  const register = async (i: number) => {
    const res = await fetch(`${stack.apiUrl}/v1/dispatches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        dispatch_date: new Date().toISOString(),
        destination: { country_code: 'FR', postal_code: String(10_000 + ((i * 7919) % 85_000)).padStart(5, '0') },
      }),
    });
    if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${await res.text()}`);
    ids.push(((await res.json()) as { id: string }).id);
  };
  for (let i = 0; i < DISPATCHES + BATCHED; i += 16)
    await Promise.all(Array.from({ length: Math.min(16, DISPATCHES + BATCHED - i) }, (_, j) => register(i + j)));
  const deps: ErasureDeps = { pool: stack.pool, temporal: stack.temporal, taskQueue: TASK_QUEUE, webhookTimeoutMs: WEBHOOK_TIMEOUT_MS };
  const [before, after] = [ids.slice(0, DISPATCHES), ids.slice(DISPATCHES)];

  say(`a workflow per dispatch, ${WORKFLOWS_AT_ONCE} at a time: ${before.length} dispatches`);
  let started = performance.now();
  for (let i = 0; i < before.length; i += WORKFLOWS_AT_ONCE) {
    await Promise.all(
      before.slice(i, i + WORKFLOWS_AT_ONCE).map(async (id) => {
        const erasure = (await eraseDispatch(deps, id))!;
        await stack.temporal.workflow.getHandle(erasureWorkflowId(erasure.id)).result();
      }),
    );
  }
  const perWorkflowS = (performance.now() - started) / 1000;
  say(`  ${perWorkflowS.toFixed(1)} s`);

  say(`eraseAtOnce: ${after.length} dispatches`);
  started = performance.now();
  await eraseAtOnce(deps, after, (erased) => say(`  ${erased} erased`));
  const batchedS = (performance.now() - started) / 1000;
  say(`  ${batchedS.toFixed(1)} s`);

  // Every one erased, both ways: no projection, a completed erasure; a sample in every table and in Temporal.
  const { rows } = await stack.pool.query(
    `SELECT (SELECT count(*) FROM dispatches WHERE issuer_id = $1)::int AS projected,
            (SELECT count(*) FROM erasures WHERE issuer_id = $1 AND status = 'completed')::int AS completed`,
    [issuerId],
  );
  if (rows[0].projected !== 0 || rows[0].completed !== ids.length) throw new Error(`not all erased: ${JSON.stringify(rows[0])}`);
  const sample = [...before.slice(0, 10), ...after.slice(0, 10)];
  for (const id of sample) {
    const footprint = await dispatchFootprint(stack.pool, id);
    const runs = await countDispatchRuns(stack.temporal, id);
    if (runs !== 0 || Object.values(footprint).some((n) => n !== 0))
      throw new Error(`${id} left: ${runs} runs, ${JSON.stringify(footprint)}`);
  }

  const result = {
    date: new Date().toISOString(),
    webhook_timeout_ms: WEBHOOK_TIMEOUT_MS,
    workflow_per_dispatch: { dispatches: DISPATCHES, seconds: perWorkflowS, ms_per_dispatch: (perWorkflowS * 1000) / DISPATCHES },
    erase_at_once: { dispatches: BATCHED, seconds: batchedS, ms_per_dispatch: (batchedS * 1000) / BATCHED },
    ratio: perWorkflowS / DISPATCHES / (batchedS / BATCHED),
    checked: { all_projection_rows_gone: true, all_erasures_completed: true, footprint_sample: sample.length },
  };
  const hours = (msPerDispatch: number) => ((msPerDispatch * 100_000) / 3_600_000).toFixed(1);
  const markdown = [
    `# issuer erase, ${result.date.slice(0, 10)}: every dispatch with a running workflow`,
    '',
    '| way | dispatches | seconds | ms per dispatch | 100,000 dispatches |',
    '| --- | ---: | ---: | ---: | ---: |',
    `| a workflow per dispatch, ${WORKFLOWS_AT_ONCE} at a time (before) | ${DISPATCHES} | ${perWorkflowS.toFixed(1)} | ${result.workflow_per_dispatch.ms_per_dispatch.toFixed(0)} | ${hours(result.workflow_per_dispatch.ms_per_dispatch)} h |`,
    `| eraseAtOnce, batches of 200 | ${BATCHED} | ${batchedS.toFixed(1)} | ${result.erase_at_once.ms_per_dispatch.toFixed(0)} | ${hours(result.erase_at_once.ms_per_dispatch)} h |`,
    '',
    `**${result.ratio.toFixed(1)}×** faster per dispatch. Every dispatch checked: no projection row, a completed erasure; ${sample.length} of them: a footprint of 0 in every table and no Temporal run.`,
    '',
  ].join('\n');
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
  const name = freeResultsName(dir, `${result.date.slice(0, 10)}-issuer-erase`, process.env.BENCH_RESULTS_NAME);
  writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(dir, `${name}.md`), markdown);
  process.stdout.write(markdown);
} finally {
  await stack.stop();
}
