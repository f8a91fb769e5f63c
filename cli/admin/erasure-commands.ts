// `dispatch erase --id ID [--wait]`, `dispatch footprint --id ID` and `issuer erase --issuer ID --confirm`
// (docs/admin-cli.md, docs/http-contract.md "Erasure"): erasure on an operator's request, and its proof.
// An erasure is the same as DELETE /v1/dispatches/{id} (ingest/erasure.ts: the erasure recorded,
// then its workflow started on the service's task queue, which the running worker executes); the
// footprint counts, per table and in Temporal, what still names a dispatch. `issuer erase` erases the
// issuer's dispatches in batches instead (ingest/erasure.ts eraseAtOnce), then its own rows.
import type { Command } from 'commander';
import { z } from 'zod';
import { findErasure, issuerDispatchIds, type Erasure } from '../../db/erasure-records.js';
import { dispatchFootprint } from '../../db/erasure.js';
import { eraseIssuerRows, revokeIssuerKeys } from '../../db/issuer-erasure.js';
import { issuerExists } from '../../db/issuers.js';
import { uuidV4 } from '../../domain/field-schemas.js';
import type { ErasureDeps } from '../../ingest/erasure.js';
import { loadConfig } from '../../platform/config.js';
import { CliError, connectTemporal, iso, output, parseOptions, requireWorker, table, withDatabase } from './context.js';

const dispatchOptions = z.object({ id: uuidV4.transform((id) => id.toLowerCase()), wait: z.boolean().optional() });
const issuerOptions = z.object({
  issuer: z.string().trim().min(1, 'must not be empty'),
  confirm: z.literal(true, { error: 'is required: this erases every dispatch, key, endpoint, feed, user and the branding of the issuer' }),
});

/** The erasure's code that needs the Temporal SDK, loaded when a command runs (cli/admin/context.ts connectTemporal). */
async function loadErasure() {
  const [{ eraseAtOnce, eraseDispatch }, { countDispatchRuns }, { erasureWorkflowId }] = await Promise.all([
    import('../../ingest/erasure.js'),
    import('../../temporal/erasure.js'),
    import('../../temporal/contract.js'),
  ]);
  return { eraseAtOnce, eraseDispatch, countDispatchRuns, erasureWorkflowId };
}
type Erasing = Awaited<ReturnType<typeof loadErasure>>;

/** Runs `work` with the database and a Temporal client of the running service, closing both. */
async function withService<T>(work: (deps: ErasureDeps, erasing: Erasing) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const erasing = await loadErasure();
  const { temporal, taskQueue, close } = await connectTemporal(config);
  try {
    return await withDatabase((pool) => work({ pool, temporal, taskQueue, webhookTimeoutMs: config.WEBHOOK_TIMEOUT_MS }, erasing));
  } finally {
    await close();
  }
}

/** Erases one dispatch and, with `wait`, waits for its workflow and reads the outcome back. */
async function erase(deps: ErasureDeps, erasing: Erasing, dispatchId: string, wait: boolean): Promise<Erasure> {
  const erasure = await erasing.eraseDispatch(deps, dispatchId);
  if (!erasure) throw new CliError(`no dispatch ${dispatchId} (and none erased)`);
  if (!wait || erasure.status === 'completed') return erasure;
  await deps.temporal.workflow.getHandle(erasing.erasureWorkflowId(erasure.id)).result();
  return (await findErasure(deps.pool, erasure.id))!;
}

function erasureJson(e: Erasure) {
  return {
    id: e.id,
    dispatch_id: e.dispatchId,
    status: e.status,
    requested_at: iso(e.requestedAt),
    completed_at: iso(e.completedAt),
    removed: { rows: e.removed.rows, workflow_runs: e.removed.workflowRuns },
  };
}

export function registerErasureCommands(program: Command): void {
  const dispatch = program.command('dispatch').description('erase a dispatch, and prove that nothing names it any more');

  dispatch
    .command('erase')
    .description('erase one dispatch everywhere (database rows and Temporal runs); only its tombstone stays')
    .requiredOption('--id <id>', 'the dispatch id (a UUID)')
    .option('--wait', 'wait until the erasure has completed and print what it removed')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(dispatchOptions, raw);
      const erasure = await withService(async (deps, erasing) => {
        await requireWorker(deps.temporal, deps.taskQueue);
        return erase(deps, erasing, options.id, Boolean(options.wait));
      });
      output(command, erasureJson(erasure), () =>
        erasure.status === 'completed'
          ? `Erasure ${erasure.id} of ${erasure.dispatchId} completed: ${erasure.removed.rows} rows, ${erasure.removed.workflowRuns} workflow runs removed.`
          : `Erasure ${erasure.id} of ${erasure.dispatchId} is ${erasure.status}; see it with: npm run admin -- dispatch footprint --id ${erasure.dispatchId}`,
      );
    });

  dispatch
    .command('footprint')
    .description('count, per table and in Temporal, what still names a dispatch (all 0 after its erasure)')
    .requiredOption('--id <id>', 'the dispatch id (a UUID)')
    .action(async (raw: unknown, command: Command) => {
      const { id } = parseOptions(dispatchOptions, raw);
      const footprint = await withService(async ({ pool, temporal }, { countDispatchRuns }) => ({
        tables: await dispatchFootprint(pool, id),
        workflowRuns: await countDispatchRuns(temporal, id),
      }));
      const total = Object.values(footprint.tables).reduce((a, b) => a + b, 0) + footprint.workflowRuns;
      output(command, { dispatch_id: id, tables: footprint.tables, workflow_runs: footprint.workflowRuns, total }, () =>
        table(
          ['WHERE', 'COUNT'],
          [
            ...Object.entries(footprint.tables).map(([name, n]) => [name, String(n)]),
            ['workflow runs (Temporal)', String(footprint.workflowRuns)],
          ],
        ),
      );
    });
}

/**
 * After its keys are revoked, how long `issuer erase` keeps looking for the issuer's new dispatches:
 * 5 s until every API process refuses them (API_KEY_CACHE_TTL_MS at most), and as long again for a
 * registration they accepted just before to reach the projection.
 */
const KEYS_QUIET_MS = 10_000;
/** Passes over the issuer's dispatches before the command gives up (each erases all it finds). */
const MAX_PASSES = 10;

/** `issuer erase`, registered by cli/admin/issuer-commands.ts beside the issuer's other commands. */
export async function issuerEraseAction(raw: unknown, command: Command): Promise<void> {
  const { issuer } = parseOptions(issuerOptions, raw);
  const result = await withService(async (deps, { eraseAtOnce }) => {
    // An operator's typo must not read as an issuer erased: nothing would have been.
    if (!(await issuerExists(deps.pool, issuer))) throw new CliError(`unknown issuer: ${issuer}`);
    // Its keys first, and again on every pass (a dashboard user may make one meanwhile): an
    // issuer's backend may still be sending, and a dispatch registered behind the erasure would
    // outlive it. What they registered until every API process refuses them (and a registration
    // then in flight) is erased by a later pass.
    // In batches (ingest/erasure.ts eraseAtOnce), not a workflow per dispatch: an issuer has
    // hundreds of thousands. A failure stops the command; run again, it goes on from what is left.
    let erased = 0;
    for (let pass = 0; ; pass++) {
      const quietAt = Date.now() + (await revokeIssuerKeys(deps.pool, issuer, KEYS_QUIET_MS));
      const ids = await issuerDispatchIds(deps.pool, issuer);
      if (ids.length === 0 && Date.now() >= quietAt) break;
      if (pass >= MAX_PASSES) throw new CliError(`issuer ${issuer}: dispatches still appear after ${MAX_PASSES} passes; run it again`);
      if (ids.length === 0) await new Promise((resolve) => setTimeout(resolve, quietAt - Date.now()));
      else erased += await eraseAtOnce(deps, ids);
    }
    return { erased, deleted: await eraseIssuerRows(deps.pool, issuer) };
  });
  output(command, { issuer_id: issuer, erased_dispatches: result.erased, deleted: result.deleted }, () =>
    [
      `Issuer ${issuer}: ${result.erased} dispatches erased; removed:`,
      ...Object.entries(result.deleted).map(([name, n]) => `  ${name}: ${n}`),
    ].join('\n'),
  );
}
