// A new user's path, end to end: `npm start` with nothing configured brings up Temporal, Postgres,
// the worker and the API; the printed key registers a dispatch and reads its status; the workflow
// is visible in Temporal filtered by DispatchStatus; a carrier event's signed webhook reaches the demo
// receiver the launcher serves (and no other loopback URL is reached); Ctrl-C stops everything; a
// restart keeps the data and the demo endpoint, and makes no second one.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { createDashboardUser, createSession } from '../../db/dashboard.js';
import { createPool, type Pool } from '../../db/pool.js';
import { runCli } from '../support/cli.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import {
  exitedWithOutput,
  freeLauncherPorts,
  launcherEnv,
  type LauncherPorts,
  nodeArgsFor,
  portOpen,
  type Started,
  whenReady,
} from '../support/processes.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// As package.json's `start` runs it.
const START = nodeArgsFor('cli/start.ts');

let dataDir: string;
let env: NodeJS.ProcessEnv;
let ports: LauncherPorts;

function launch(): Promise<Started> {
  const child = spawn(process.execPath, START, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return whenReady(child, 'Press Ctrl-C to stop.', 'npm start');
}

async function stop(launched: Started): Promise<number | null> {
  launched.child.kill('SIGINT');
  return launched.exited;
}

/** The running launcher's database (embedded Postgres), as the runtime file names it. */
async function withDatabase<T>(use: (pool: Pool) => Promise<T>): Promise<T> {
  const { databaseUrl } = JSON.parse(readFileSync(env.CDS_RUNTIME_FILE!, 'utf8')) as { databaseUrl: string };
  const pool = createPool(databaseUrl, { max: 1, applicationName: 'test-npm-start' });
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}

function postEvent(id: string, key: string, status: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${ports.api}/v1/dispatches/${id}/events`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ status, occurred_at: new Date().toISOString() }),
  });
}

/** The demo receiver's line for a verified status.updated webhook of this dispatch. */
const receivedLine = (dispatch: string) =>
  new RegExp(`demo webhook  status\\.updated  event evt_\\w+  dispatch ${dispatch}  attempt \\d+  signature ok`);

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cds-start-'));
  chmodSync(dataDir, 0o755);
  ports = await freeLauncherPorts();
  env = launcherEnv(ports, dataDir);
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start with nothing configured', () => {
  let key: string;
  let dispatchId: string;
  let demoEndpointId: string;

  it('starts everything and prints the API URL, a demo key and the Temporal UI URL', async () => {
    const launched = await launch();
    try {
      const out = launched.output();
      expect(out).toContain(`API:          http://localhost:${ports.api}/v1`);
      expect(out).toContain(`Temporal UI:  http://localhost:${ports.ui}/namespaces/default/workflows`);
      key = /API key:\s+(cds_live_\w+)/.exec(out)![1];

      const registered = await fetch(`http://127.0.0.1:${ports.api}/v1/dispatches`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ destination: { postal_code: '75011', country_code: 'FR' } }),
      });
      expect(registered.status).toBe(201);
      dispatchId = ((await registered.json()) as { id: string }).id;
      const status = await fetch(`http://127.0.0.1:${ports.api}/v1/status/${dispatchId}`, { headers: { Authorization: `Bearer ${key}` } });
      expect(status.status).toBe(200);
      expect(((await status.json()) as { status: string }).status).toBe('dispatched');

      expect((await fetch(`http://127.0.0.1:${ports.ui}/`)).status).toBe(200);
      const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
      try {
        const client = new Client({ connection });
        let listed = false;
        for (let i = 0; i < 50 && !listed; i++) {
          for await (const wf of client.workflow.list({ query: 'DispatchStatus = "dispatched"' }))
            if (wf.workflowId === dispatchId) listed = true;
          if (!listed) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(listed).toBe(true);
      } finally {
        await connection.close();
      }
    } finally {
      expect(await stop(launched)).toBe(0);
    }
    // Ctrl-C stopped every child: nothing listens any more.
    expect(await portOpen(ports.api)).toBe(false);
    expect(await portOpen(ports.temporal)).toBe(false);
    expect(await portOpen(ports.demoWebhook)).toBe(false);
  }, 180_000);

  it("delivers a carrier event's signed webhook to its demo receiver, which logs it as verified, and reaches no other loopback URL", async () => {
    const launched = await launch();
    try {
      const out = launched.output();
      const demoUrl = `http://127.0.0.1:${ports.demoWebhook}/demo-webhooks`;
      demoEndpointId = new RegExp(`Demo webhook: (whe_\\w+) -> ${demoUrl}`).exec(out)![1];
      const issuerId = /Demo issuer:\s+(iss_\w+)/.exec(out)![1];
      const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

      // Another loopback URL, the demo receiver's included, is refused by the API as anywhere else…
      for (const url of [`http://127.0.0.1:${ports.demoWebhook + 1}/hook`, demoUrl]) {
        const refused = await fetch(`http://127.0.0.1:${ports.api}/v1/webhook_endpoints`, { method: 'POST', headers, body: JSON.stringify({ url, events: ['status.updated'] }) }); // prettier-ignore
        expect(refused.status).toBe(400);
        expect(((await refused.json()) as { message: string }).message).toMatch(
          /^url: cannot receive webhooks: 127\.0\.0\.1 is in a loopback range/,
        );
      }
      // …and by the attempt, in this very process, for an endpoint written straight to the database:
      // the API's own port on loopback, as an attacker would aim it.
      const aimed = await withDatabase((pool) => createWebhookEndpoint(pool, { issuerId, url: `http://127.0.0.1:${ports.api}/v1/openapi.json`, events: ['status.updated'] })); // prettier-ignore
      if (!aimed.ok) throw new Error(aimed.reason);

      const registered = await fetch(`http://127.0.0.1:${ports.api}/v1/dispatches`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ destination: { postal_code: '75011', country_code: 'FR' } }),
      });
      expect(registered.status).toBe(201);
      const webhookDispatch = ((await registered.json()) as { id: string }).id;
      expect((await postEvent(webhookDispatch, key, 'in_transit')).status).toBe(202);

      await until(() => receivedLine(webhookDispatch).test(launched.output()), "the demo receiver's verified line", 60_000);
      // Ids only: nothing of the status record (the postal code) is logged.
      expect(launched.output()).not.toContain('75011');
      const refusedAttempt = await until(
        () =>
          withDatabase(async (pool) => {
            const { rows } = await pool.query<{ error: string }>('SELECT error FROM delivery_attempts WHERE endpoint_id = $1', [aimed.endpoint.id]); // prettier-ignore
            return rows[0]?.error;
          }),
        'the attempt to the other loopback URL',
        60_000,
      );
      expect(refusedAttempt).toMatch(/^webhook URL refused: 127\.0\.0\.1 is in a loopback range/);
      await withDatabase((pool) => pool.query('UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1', [aimed.endpoint.id]));
    } finally {
      expect(await stop(launched)).toBe(0);
    }
  }, 180_000);

  it("does not link the dashboard to the dev server's Temporal UI (an operators' tool), and says so in its start-up output", async () => {
    const launched = await launch();
    try {
      const out = launched.output();
      // A signed-in dashboard user of the demo issuer (a session made in its database, as sign-in would).
      const issuerId = /Demo issuer:\s+(iss_\w+)/.exec(out)![1];
      const { databaseUrl } = JSON.parse(readFileSync(env.CDS_RUNTIME_FILE!, 'utf8')) as { databaseUrl: string };
      const pool = createPool(databaseUrl, { max: 1, applicationName: 'test-npm-start' });
      let session: string;
      try {
        const { user } = (await createDashboardUser(pool, { issuerId, email: `operator-${Date.now()}@example.test`, tokenTtlMs: 60_000 }))!; // prettier-ignore
        session = await createSession(pool, user.id, { idleMs: 3_600_000, maxMs: 3_600_000 });
      } finally {
        await pool.end();
      }
      const page = await fetch(`http://127.0.0.1:${ports.api}/dashboard/dispatches/${dispatchId}`, { headers: { Cookie: `cds_session=${session}` } }); // prettier-ignore
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain(`<code>${dispatchId}</code>`);
      expect(html).toContain('No Temporal UI address is configured');
      expect(html).not.toContain('id="workflow-link"');
      expect(html).not.toContain(`:${ports.ui}`);
      // The operator at this machine is told where the UI is, and why the dashboard does not link to it.
      expect(out).toContain(`Temporal UI:  http://localhost:${ports.ui}/namespaces/default/workflows`);
      expect(out).toContain('the dashboard links to it only if you set TEMPORAL_UI_URL');
    } finally {
      expect(await stop(launched)).toBe(0);
    }
  }, 180_000);

  it("prints the running npm start's dashboard address in the operator CLI's set-password links, whatever port it was given", async () => {
    const launched = await launch();
    try {
      const issuerId = /Demo issuer:\s+(iss_\w+)/.exec(launched.output())![1];
      // The operator's other terminal: no PORT, DATABASE_URL or DASHBOARD_BASE_URL, only the running service.
      const cli = { CDS_RUNTIME_FILE: env.CDS_RUNTIME_FILE! };
      const created = await runCli(['user', 'create', '--issuer', issuerId, '--email', `op-${Date.now()}@example.test`, '--json'], cli);
      expect(created.code).toBe(0);
      const url = new URL((JSON.parse(created.stdout) as { set_password_url: string }).set_password_url);
      expect(url.origin).toBe(`http://localhost:${ports.api}`);
      // The link opens the set-password page of that service.
      expect((await fetch(`http://127.0.0.1:${ports.api}${url.pathname}${url.search}`)).status).toBe(200);
      const email = (JSON.parse(created.stdout) as { email: string }).email;
      const reset = await runCli(['user', 'reset-password', '--email', email, '--json'], cli);
      expect(new URL((JSON.parse(reset.stdout) as { set_password_url: string }).set_password_url).origin).toBe(
        `http://localhost:${ports.api}`,
      );
    } finally {
      expect(await stop(launched)).toBe(0);
    }
  }, 180_000);

  it('keeps all data and the demo endpoint across a restart, makes no second one, and does not print the key again', async () => {
    const launched = await launch();
    try {
      expect(launched.output()).not.toMatch(/API key:/);
      expect(launched.output()).toContain('Demo issuer:');
      expect(launched.output()).toContain(`Demo webhook: ${demoEndpointId} -> http://127.0.0.1:${ports.demoWebhook}/demo-webhooks`);
      const demoEndpoints = await withDatabase(async (pool) => {
        const { rows } = await pool.query<{ id: string }>("SELECT id FROM webhook_endpoints WHERE url LIKE '%/demo-webhooks'");
        return rows.map((row) => row.id);
      });
      expect(demoEndpoints).toEqual([demoEndpointId]);
      const status = await fetch(`http://127.0.0.1:${ports.api}/v1/status/${dispatchId}`, { headers: { Authorization: `Bearer ${key}` } });
      expect(status.status).toBe(200);
      const event = await fetch(`http://127.0.0.1:${ports.api}/v1/dispatches/${dispatchId}/events`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ status: 'in_transit', occurred_at: new Date().toISOString() }),
      });
      // The workflow started before the restart is still running and takes the event.
      expect(event.status).toBe(202);
      let current = '';
      for (let i = 0; i < 50 && current !== 'in_transit'; i++) {
        const res = await fetch(`http://127.0.0.1:${ports.api}/v1/status/${dispatchId}`, { headers: { Authorization: `Bearer ${key}` } });
        current = ((await res.json()) as { status: string }).status;
        if (current !== 'in_transit') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(current).toBe('in_transit');
      // The receiver is served again, on the same URL.
      await until(() => receivedLine(dispatchId).test(launched.output()), "the demo receiver's line after the restart", 60_000);
    } finally {
      expect(await stop(launched)).toBe(0);
    }
  }, 180_000);

  it('starts again after its process was killed with SIGKILL, stopping the Postgres and Temporal it left running', async () => {
    const first = await launch();
    const { pid } = JSON.parse(readFileSync(env.CDS_RUNTIME_FILE!, 'utf8')) as { pid: number };
    process.kill(pid, 'SIGKILL'); // no clean-up runs: the embedded Postgres and the dev server stay up
    await first.exited;
    expect(await portOpen(ports.temporal)).toBe(true);

    const second = await launch();
    try {
      // Logged (asynchronously, platform/logger.ts) before the launcher's summary, yet not always written before it.
      await until(
        () => second.output().includes('stopped a Postgres left running by an earlier start'),
        'the Postgres leftover notice',
        10_000,
      );
      await until(
        () => second.output().includes('stopped a Temporal dev server left running by an earlier start'),
        'the dev server leftover notice',
        10_000,
      );
      const status = await fetch(`http://127.0.0.1:${ports.api}/v1/status/${dispatchId}`, { headers: { Authorization: `Bearer ${key}` } });
      expect(status.status).toBe(200);
    } finally {
      expect(await stop(second)).toBe(0);
    }
  }, 180_000);
});

describe('npm start when a part cannot start', () => {
  it('stops with exit code 1 and the reason on one line on stderr', async () => {
    const notExecutable = path.join(dataDir, 'temporal');
    writeFileSync(notExecutable, '', { mode: 0o644 });
    const child = spawn(process.execPath, START, {
      cwd: ROOT,
      env: { ...env, CDS_DATA_DIR: path.join(dataDir, 'broken'), TEMPORAL_CLI_PATH: notExecutable },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await exitedWithOutput(child); // its stderr read to the end
    expect(code).toBe(1);
    expect(stderr).toBe(`npm start: could not start: TEMPORAL_CLI_PATH=${notExecutable} is not an executable file\n`);
  }, 120_000);

  it("stops with exit code 1 and one line naming DEMO_WEBHOOK_PORT when the demo receiver's port is held, having made nothing: the next start prints the key", async () => {
    const holder = net.createServer();
    const held = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as net.AddressInfo).port)),
    );
    try {
      const child = spawn(process.execPath, START, {
        cwd: ROOT,
        env: { ...env, CDS_DATA_DIR: path.join(dataDir, 'busy-demo'), CDS_RUNTIME_FILE: path.join(dataDir, 'busy-demo.json'), DEMO_WEBHOOK_PORT: String(held) }, // prettier-ignore
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      expect(await exitedWithOutput(child)).toBe(1);
      expect(stderr).toBe(
        `npm start: could not start: DEMO_WEBHOOK_PORT ${held} is already in use: stop the other process or set DEMO_WEBHOOK_PORT\n`,
      );
      expect(stdout).not.toContain('Press Ctrl-C to stop.');
    } finally {
      holder.close();
    }
    // Nothing was made: the next start, on a free port, makes the demo issuer and prints its key.
    const next = spawn(process.execPath, START, { cwd: ROOT, env: { ...env, CDS_DATA_DIR: path.join(dataDir, 'busy-demo'), CDS_RUNTIME_FILE: path.join(dataDir, 'busy-demo.json') }, stdio: ['ignore', 'pipe', 'pipe'] }); // prettier-ignore
    const started = await whenReady(next, 'Press Ctrl-C to stop.', 'npm start');
    try {
      expect(started.output()).toMatch(/API key:\s+cds_live_\w+/);
      expect(started.output()).toContain(`-> http://127.0.0.1:${ports.demoWebhook}/demo-webhooks`);
    } finally {
      expect(await stop(started)).toBe(0);
    }
  }, 180_000);

  // Another session's Temporal on the port answered the readiness probe, so the launcher said its own
  // dev server had started (and would have run its worker against that Temporal) while the server it
  // spawned exited at once, six times, before stopping with a stack trace.
  it.each([
    ['frontend port is held by another Temporal', 'temporal'],
    ['UI port is held by another process', 'ui'],
  ] as const)(
    "stops with exit code 1 and one line naming the port variables when the dev server's %s",
    async (_, held) => {
      const holder = net.createServer();
      const heldPort =
        held === 'temporal'
          ? Number(process.env.TEST_TEMPORAL_ADDRESS!.split(':').pop())
          : await new Promise<number>((resolve) =>
              holder.listen(0, '127.0.0.1', () => resolve((holder.address() as net.AddressInfo).port)),
            );
      try {
        const variable = held === 'temporal' ? 'TEMPORAL_DEV_SERVER_PORT' : 'TEMPORAL_DEV_SERVER_UI_PORT';
        const child = spawn(process.execPath, START, {
          cwd: ROOT,
          env: { ...env, CDS_DATA_DIR: path.join(dataDir, `busy-${held}`), [variable]: String(heldPort) },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        const code = await exitedWithOutput(child);
        expect(code).toBe(1);
        expect(stderr).toBe(
          `npm start: could not start: ${variable} ${heldPort} is already in use: stop the other process or set ${variable}\n`,
        );
      } finally {
        holder.close();
      }
    },
    120_000,
  );
});
