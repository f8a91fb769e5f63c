// A running service on a database of its own, for the retention tests (test/e2e/retention-*.test.ts):
// a sweep with windows of seconds must never touch another test file's rows in the shared database.
// The API runs in the test (startHarness, no worker); the worker is the product's, in its own
// process (test/support/worker-process.ts), so a test can kill it and read what it logged.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { runCli, type CliResult } from './cli.js';
import { requireTestEnv, startHarness, type Harness } from './harness.js';
import { whenReady, type Started } from './processes.js';
import { createScratchDatabase } from './scratch-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = path.join(ROOT, 'test', 'support', 'worker-process.ts');

export interface RetentionService {
  h: Harness;
  databaseUrl: string;
  /** Starts (or starts again) the worker process with the service's env plus `extra`. */
  startWorker(extra?: Record<string, string>): Promise<Started>;
  worker(): Started | undefined;
  /** SIGKILL: no draining, an activity cut wherever it is. */
  killWorker(): Promise<void>;
  cli(args: string[], timeoutMs?: number): Promise<CliResult>;
  stop(): Promise<void>;
}

export async function startRetentionService(name: string, env: Record<string, string>): Promise<RetentionService> {
  const database = await createScratchDatabase(name, { migrate: true });
  const databaseUrl = database.url;
  const h = await startHarness({ worker: false, env: { ...env, DATABASE_URL: databaseUrl } });
  let current: Started | undefined;
  const processEnv = (extra: Record<string, string>) => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? ROOT,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    TEST_WORKFLOW_BUNDLE: requireTestEnv('TEST_WORKFLOW_BUNDLE'),
    LOG_LEVEL: 'info',
    ...env,
    ...extra,
  });

  return {
    h,
    databaseUrl,
    async startWorker(extra = {}) {
      // tsx as a loader in the one process (its CLI would fork a child that a SIGKILL does not reach).
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
        cwd: ROOT,
        env: processEnv(extra),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      current = await whenReady(child, 'worker ready', 'the worker');
      return current;
    },
    worker: () => current,
    async killWorker() {
      if (!current || current.child.exitCode !== null) return;
      current.child.kill('SIGKILL');
      await current.exited;
    },
    cli(args, timeoutMs = 120_000) {
      const { PATH: _path, HOME: _home, ...cliEnv } = processEnv({});
      return runCli([...args, '--json'], cliEnv, timeoutMs);
    },
    async stop() {
      if (current && current.child.exitCode === null) {
        current.child.kill('SIGTERM');
        await current.exited;
      }
      await h.stop();
      await database.drop();
    },
  };
}
