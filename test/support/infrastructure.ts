// Started by Jest's global setup (test/support/global-setup.ts): brings up the real infrastructure once for the whole run — an embedded
// Postgres (migrated), a Temporal dev server with our search attributes, the time-skipping test
// server binary, and one workflow bundle — and hands them to the test files through environment
// variables (TEST_DATABASE_URL, TEST_TEMPORAL_ADDRESS, TEST_TEMPORAL_TEST_SERVER, TEST_WORKFLOW_BUNDLE).
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { migrate } from '../../db/migrate.js';
import { createLogger } from '../../platform/logger.js';
import { freePort, startPostgres } from '../../devtools/postgres.js';
import { resolveTemporalCli } from '../../devtools/temporal-cli.js';
import { startDevServer } from '../../devtools/temporal-dev-server.js';
import { resolveTestServer } from '../../devtools/test-server.js';
import { WORKFLOWS_PATH } from '../../worker/create-worker.js';

export async function startInfrastructure(): Promise<void> {
  const logger = createLogger({ name: 'test-setup', level: process.env.TEST_LOG_LEVEL ?? 'warn', destination: 2 });
  const work = mkdtempSync(path.join(tmpdir(), 'cds-test-'));
  chmodSync(work, 0o755); // the embedded Postgres runs as its own user when we are root
  const started = Date.now();

  const [postgres, cliPath, bundle] = await Promise.all([
    startPostgres({ dataDir: path.join(work, 'postgres'), persistent: false, logger }),
    resolveTemporalCli(logger),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never }),
  ]);
  await migrate(postgres.url, logger);
  const devServer = await startDevServerRetrying(cliPath, logger);
  const testServerPath = resolveTestServer(logger);

  const bundlePath = path.join(work, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);

  process.env.TEST_DATABASE_URL = postgres.url;
  process.env.TEST_TEMPORAL_ADDRESS = devServer.address;
  process.env.TEST_TEMPORAL_CLI = cliPath;
  process.env.TEST_TEMPORAL_TEST_SERVER = testServerPath;
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
  process.env.TEST_WORK_DIR = work;
  (globalThis as Record<string, unknown>).__cdsInfra = { postgres, devServer, work };
  logger.info({ ms: Date.now() - started }, 'test infrastructure ready');
}

/**
 * Several test runs may share the machine (CI, a developer's watch mode): a port picked as free can
 * be taken before the dev server binds it, and the server then exits. Such a start is tried again
 * on fresh ports.
 */
async function startDevServerRetrying(cliPath: string, logger: ReturnType<typeof createLogger>, attempts = 3) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startDevServer({ cliPath, port: await freePort(), logger });
    } catch (error) {
      if (attempt >= attempts || !/exited during start-up/.test(String(error))) throw error;
      logger.warn({ attempt, err: error }, 'the Temporal dev server exited during start-up; trying again on other ports');
    }
  }
}
