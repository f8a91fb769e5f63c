// `retention run` (docs/privacy.md "What is kept, and for how long"; docs/admin-cli.md): applies the
// retention windows now instead of waiting for the daily Schedule. It runs the same sweep workflow
// (workflows/retention.ts) on the service's workers, with their RETENTION_* windows, and prints what
// it removed: `{ erased_dispatches, cleared_payloads, deleted_history_rows, deleted_links }`.
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig } from '../../platform/config.js';
import { connectTemporal, output, parseOptions, requireWorker, wholeNumberOption } from './context.js';

const runOptions = z.object({ batchSize: wholeNumberOption(1, 10_000).optional() });

export function registerRetentionCommands(program: Command): void {
  const retention = program.command('retention').description('apply the retention windows (RETENTION_*)');

  retention
    .command('run')
    .description('erase and clear now what the retention windows say is due, in bounded batches, and print the counts')
    .option('--batch-size <n>', 'rows per batch (1–10000; default 1000, dispatches 200)')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(runOptions, raw);
      const config = loadConfig();
      const { temporal, taskQueue, close } = await connectTemporal(config);
      try {
        await requireWorker(temporal, taskQueue);
        const { runRetentionSweep } = await import('../../temporal/client.js');
        const summary = await runRetentionSweep(temporal, taskQueue, { batchSize: options.batchSize });
        output(
          command,
          summary,
          () =>
            `Retention applied: ${summary.erased_dispatches} dispatches erased, ${summary.cleared_payloads} webhook payloads cleared, ` +
            `${summary.deleted_history_rows} transit history rows and ${summary.deleted_links} tracking links deleted.`,
        );
      } finally {
        await close();
      }
    });
}
