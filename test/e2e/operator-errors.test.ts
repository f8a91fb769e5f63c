// What an operator reads when a process cannot start (docs/configuration.md, docs/configuration.md "When a
// process does not start"): the real entry points, spawned with a bad environment or on a port
// another process holds, stop with exit code 1 and exactly one line on stderr naming the variable
// and what it must be; nothing on stdout (no JSON log line, no zod dump), no stack trace, and never
// the value of a secret (DATABASE_URL's password, TEMPORAL_API_KEY).
import { spawn } from 'node:child_process';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { expectOneLineFailure, runCli } from '../support/cli.js';
import { requireTestEnv } from '../support/env.js';
import { nodeArgsFor } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an entry point as package.json does, with exactly `env` (plus PATH and HOME), to its exit. */
function run(entry: string, env: Record<string, string>, timeoutMs = 60_000): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgsFor(entry), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? ROOT, CDS_RUNTIME_FILE: '/nonexistent/runtime.json', WORKER_METRICS_PORT: '0', ...env }, // prettier-ignore
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Exit code 1, nothing on stdout, one line on stderr that is `line`, no stack, no raw error code. */
function expectOneLine(outcome: Outcome, line: string | RegExp): void {
  expect({ code: outcome.code, stdout: outcome.stdout }).toEqual({ code: 1, stdout: '' });
  const lines = outcome.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  if (typeof line === 'string') expect(lines[0]).toBe(line);
  else expect(lines[0]).toMatch(line);
  expect(outcome.stderr).not.toMatch(/\n\s+at |EADDRINUSE|ZodError|"code":/);
}

const ENTRY_POINTS = ['api/main.ts', 'worker/main.ts', 'cli/start.ts', 'db/migrate-cli.ts'];

describe('bad configuration at start-up', () => {
  it.each(ENTRY_POINTS)('%s with PORT=abc stops with one line naming PORT and what it must be', async (entry) => {
    expectOneLine(await run(entry, { PORT: 'abc' }), 'invalid configuration: PORT: must be a whole number 1–65535, got "abc"');
  });

  it.each([
    ['LOG_LEVEL', 'loud', 'must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
    ['RATE_LIMIT_PER_MINUTE', '-5', 'must be a whole number 1–1000000000, got "-5"'],
    ['TEMPORAL_TLS', 'yes', 'must be true, false, 1 or 0, got "yes"'],
    [
      'WEBHOOK_RETRY_SCHEDULE',
      '1m,soon',
      'must be durations separated by commas, e.g. 1m,5m,30m,2h,8h (units ms, s, m, h, d), got "1m,soon"',
    ],
    ['PUBLIC_BASE_URL', 'cards.example.com', 'must be an http:// or https:// URL, got "cards.example.com"'],
    ['WORKER_NONSTICKY_POLL_RATIO', '0', 'must be a number greater than 0 and at most 1, got "0"'],
  ])('api/main.ts with %s=%s names the variable and what it must be', async (variable, value, problem) => {
    expectOneLine(await run('api/main.ts', { [variable]: value }), `invalid configuration: ${variable}: ${problem}`);
  });

  it.each([
    ['api/main.ts', 'PORT', '0'],
    ['cli/start.ts', 'PORT', '0'],
    ['cli/start.ts', 'TEMPORAL_DEV_SERVER_PORT', 'abc'],
    ['cli/start.ts', 'TEMPORAL_DEV_SERVER_UI_PORT', '0'],
  ])('%s with %s=%s (no port anyone means) names the variable and its range', async (entry, variable, value) => {
    // A folder of its own: were the value taken, npm start would start there, not in the checkout's .data/.
    const env = { [variable]: value, CDS_DATA_DIR: path.join(tmpdir(), 'cds-never-started') };
    expectOneLine(await run(entry, env), `invalid configuration: ${variable}: must be a whole number 1–65535, got "${value}"`);
  });

  it('names every bad variable on the one line', async () => {
    expectOneLine(
      await run('worker/main.ts', { PORT: '70000', LOG_LEVEL: 'loud' }),
      'invalid configuration: PORT: must be a whole number 1–65535, got "70000"; LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    );
  });

  it('never shows the value of DATABASE_URL (it holds a password) or TEMPORAL_API_KEY', async () => {
    const outcome = await run('api/main.ts', { DATABASE_URL: 'postgres://cds:hunter2-secret@db host/cds', TEMPORAL_API_KEY: '' });
    expectOneLine(
      outcome,
      'invalid configuration: DATABASE_URL: must be a URL, e.g. postgres://user:password@host:5432/database (its value is not shown); ' +
        'TEMPORAL_API_KEY: must not be empty (its value is not shown)',
    );
    expect(outcome.stderr).not.toContain('hunter2');
  });

  it.each([
    ['api/main.ts', 'DATABASE_URL: is required for a standalone API process (npm start sets it up)'],
    ['worker/main.ts', 'DATABASE_URL: is required for a standalone worker (npm start sets it up)'],
    ['db/migrate-cli.ts', 'DATABASE_URL: is required to migrate'],
  ])('%s without DATABASE_URL says it is required', async (entry, problem) => {
    expectOneLine(await run(entry, { TEMPORAL_ADDRESS: '127.0.0.1:7233' }), `invalid configuration: ${problem}`);
  });

  it.each(['api/main.ts', 'worker/main.ts'])('%s: a TLS file that cannot be read names its variable and the path', async (entry) => {
    const outcome = await run(entry, {
      DATABASE_URL: 'postgres://cds:secret@127.0.0.1:1/cds',
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/nonexistent/ca.pem',
    });
    expectOneLine(outcome, 'invalid configuration: TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read /nonexistent/ca.pem (ENOENT)');
  });

  it('the operator CLI says the same on its one line', async () => {
    const result = await runCli(['retention', 'run'], { PORT: 'abc' });
    expectOneLineFailure(result, /^error: invalid configuration: PORT: must be a whole number 1–65535, got "abc"$/);
  });
});

describe('a port another process holds', () => {
  let holder: net.Server | undefined;
  afterEach(() => void holder?.close());

  async function hold(): Promise<number> {
    holder = net.createServer();
    return new Promise<number>((resolve) => holder!.listen(0, '0.0.0.0', () => resolve((holder!.address() as net.AddressInfo).port)));
  }

  const infrastructure = () => ({
    DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
    TEMPORAL_TASK_QUEUE: `operator-errors-${process.pid}`,
    LOG_LEVEL: 'warn',
  });

  it('api/main.ts on a held PORT stops with one line naming PORT and the port', async () => {
    const port = await hold();
    expectOneLine(
      await run('api/main.ts', { ...infrastructure(), PORT: String(port) }),
      `PORT ${port} is already in use: stop the other process or set PORT`,
    );
  });

  it('worker/main.ts on a held WORKER_METRICS_PORT stops with one line naming it', async () => {
    const port = await hold();
    expectOneLine(
      await run('worker/main.ts', { ...infrastructure(), WORKER_METRICS_PORT: String(port) }),
      `WORKER_METRICS_PORT ${port} is already in use: stop the other process or set WORKER_METRICS_PORT`,
    );
  }, 90_000);

  it('npm start (TEMPORAL_ADDRESS and DATABASE_URL set) on a held PORT stops with one line naming PORT', async () => {
    const port = await hold();
    const outcome = await run('cli/start.ts', { ...infrastructure(), PORT: String(port), CDS_DATA_DIR: path.join(tmpdir(), 'cds-operator-errors') }); // prettier-ignore
    expectOneLine(outcome, `npm start: could not start: PORT ${port} is already in use: stop the other process or set PORT`);
  }, 120_000);
});

describe('a dependency that is not there at start-up', () => {
  /** A loopback port nobody listens on: connections to it are refused at once. */
  const closedPort = () => freePort();

  it('worker/main.ts with Temporal unreachable stops with one line naming TEMPORAL_ADDRESS and the reason', async () => {
    const port = await closedPort();
    expectOneLine(
      await run('worker/main.ts', { DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'), TEMPORAL_ADDRESS: `127.0.0.1:${port}` }),
      `Temporal at 127.0.0.1:${port} (TEMPORAL_ADDRESS) is unreachable: connection refused`,
    );
  }, 90_000);

  it('worker/main.ts with a TEMPORAL_NAMESPACE that Temporal does not have stops with one line naming it', async () => {
    const outcome = await run('worker/main.ts', {
      DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
      TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
      TEMPORAL_NAMESPACE: 'no-such-namespace',
      TEMPORAL_TASK_QUEUE: `operator-errors-${process.pid}`,
    });
    expectOneLine(outcome, `TEMPORAL_NAMESPACE no-such-namespace does not exist on Temporal at ${requireTestEnv('TEST_TEMPORAL_ADDRESS')}: create it or set TEMPORAL_NAMESPACE`); // prettier-ignore
  }, 90_000);

  it('db/migrate-cli.ts with Postgres unreachable stops with one line naming DATABASE_URL, never its password', async () => {
    const port = await closedPort();
    const outcome = await run('db/migrate-cli.ts', { DATABASE_URL: `postgres://cds:hunter2-secret@127.0.0.1:${port}/cds` });
    expectOneLine(outcome, `the database at 127.0.0.1:${port} (DATABASE_URL) is unreachable: connection refused`);
    expect(outcome.stderr).not.toContain('hunter2');
  });

  it('npm start (TEMPORAL_ADDRESS and DATABASE_URL set) with Postgres unreachable stops with one line naming DATABASE_URL', async () => {
    const port = await closedPort();
    const outcome = await run('cli/start.ts', {
      DATABASE_URL: `postgres://cds:hunter2-secret@127.0.0.1:${port}/cds`,
      TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
      CDS_DATA_DIR: path.join(tmpdir(), 'cds-operator-errors'),
      LOG_LEVEL: 'silent',
    });
    expectOneLine(
      outcome,
      `npm start: could not start: the database at 127.0.0.1:${port} (DATABASE_URL) is unreachable: connection refused`,
    );
    expect(outcome.stderr).not.toContain('hunter2');
  }, 120_000);

  it('db/migrate-cli.ts with a database that does not exist says so on one line', async () => {
    const url = new URL(requireTestEnv('TEST_DATABASE_URL'));
    url.pathname = '/no_such_database';
    expectOneLine(
      await run('db/migrate-cli.ts', { DATABASE_URL: url.toString() }),
      `the database at ${url.host} (DATABASE_URL) refused the connection: database "no_such_database" does not exist`,
    );
  });
});
