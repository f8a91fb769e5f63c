// docker-compose.yml and the Dockerfile describe the production topology (docs/design.md). No Docker
// engine runs here, so these tests read the files: the services, their ports, how api and worker
// find Postgres and Temporal, the start-up order, and the image's Node version and user.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { SERVER_DYNAMIC_CONFIG } from '../../devtools/temporal-server-settings.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  ports?: Array<string | number | { target: number; published?: string | number; host_ip?: string }>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
}

// Merge keys (`<<: *app-environment`) as docker compose reads them.
const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const chartValues = parse(readFileSync(path.join(ROOT, 'deploy/helm/card-delivery/values.yaml'), 'utf8')) as {
  worker: { nodeOptions: string };
};
const services = compose.services;
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');

const APP_SERVICES = ['api', 'worker'] as const;

/**
 * A service's published ports, short syntax (`[HOST_IP:][PUBLISHED:]TARGET[/PROTOCOL]`, IPv6 host
 * addresses in brackets) and long syntax (`{ target, published, host_ip }`) alike. An empty host
 * address means every address of the host.
 */
function published(name: string): Array<{ hostIp: string; published: string; target: string }> {
  return (services[name].ports ?? []).map((port) => {
    if (typeof port === 'object') return { hostIp: port.host_ip ?? '', published: String(port.published ?? ''), target: String(port.target) }; // prettier-ignore
    const spec = String(port).replace(/\/(tcp|udp|sctp)$/, '');
    const match = /^(?:(\[[^\]]+\]|[^:]*):)?(?:([^:]*):)?([^:]+)$/.exec(spec);
    if (!match) throw new Error(`unreadable port ${spec} of ${name}`);
    const [, first, second, target] = match;
    // One colon: PUBLISHED:TARGET; two: HOST_IP:PUBLISHED:TARGET.
    const [hostIp, publishedPort] = second === undefined ? ['', first ?? ''] : [first ?? '', second];
    return { hostIp: hostIp.replace(/^\[|\]$/g, ''), published: publishedPort, target };
  });
}

describe('docker-compose.yml', () => {
  it('has the production topology: postgres, temporal, temporal-ui, api, worker and the one-shot setup services', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['postgres', 'temporal', 'temporal-ui', 'api', 'worker', 'migrate', 'temporal-schema', 'temporal-setup']),
    );
  });

  it('publishes the API on 3000 on every host address', () => {
    expect(published('api')).toEqual([{ hostIp: '', published: '3000', target: '3000' }]);
  });

  it('publishes the Temporal UI (no authentication of its own) on 127.0.0.1 only, for an operator on the host', () => {
    expect(published('temporal-ui')).toEqual([{ hostIp: '127.0.0.1', published: '8233', target: '8080' }]);
  });

  it('publishes nothing else: not the Temporal frontend (7233), not Postgres, not the worker', () => {
    const others = Object.keys(services).filter((name) => name !== 'api' && name !== 'temporal-ui');
    expect(others.flatMap((name) => published(name).map((port) => ({ name, ...port })))).toEqual([]);
  });

  it('leaves TEMPORAL_UI_URL unset, so the dashboard links to the Temporal UI only where an operator configured it', () => {
    for (const name of APP_SERVICES) expect(services[name].environment).not.toHaveProperty('TEMPORAL_UI_URL');
  });

  it('pins every pulled image to a version, never latest', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue;
      expect({ name, image: service.image }).toEqual({ name, image: expect.stringMatching(/^[\w./-]+:\d+(\.\d+)+[\w.-]*$/) });
    }
  });

  it('runs Postgres 17 with a health check and a volume', () => {
    expect(services.postgres.image).toMatch(/^postgres:17(\.|$)/);
    expect(services.postgres.healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(services.postgres.volumes?.[0]).toMatch(/^postgres-data:/);
  });

  it.each(APP_SERVICES)('%s reaches Postgres and Temporal through their compose services', (name) => {
    const env = services[name].environment!;
    const database = new URL(env.DATABASE_URL.replace(/\$\{[^}]*\}/g, 'password'));
    expect(database.protocol).toBe('postgres:');
    expect(services[database.hostname]).toBe(services.postgres);
    expect(database.pathname).toBe(`/${services.postgres.environment!.POSTGRES_DB}`);
    const [temporalHost, temporalPort] = env.TEMPORAL_ADDRESS.split(':');
    expect(services[temporalHost]).toBe(services.temporal);
    expect(temporalPort).toBe('7233');
    for (const variable of ['TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE', 'RATE_LIMIT_PER_MINUTE']) expect(env).toHaveProperty(variable);
  });

  it.each(APP_SERVICES)('%s starts after Postgres is healthy, migrations and Temporal setup completed, and Temporal is healthy', (name) => {
    expect(services[name].depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      migrate: { condition: 'service_completed_successfully' },
      temporal: { condition: 'service_healthy' },
      'temporal-setup': { condition: 'service_completed_successfully' },
    });
  });

  it('starts Temporal only after Postgres is healthy and its schema is set up', () => {
    expect(services.temporal.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
  });

  it('gives every service that others wait on as healthy a health check', () => {
    for (const service of Object.values(services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(services[dependency]).toBeDefined();
        if (condition === 'service_healthy')
          expect({ dependency, healthcheck: Boolean(services[dependency].healthcheck) }).toEqual({ dependency, healthcheck: true });
      }
    }
  });

  it.each(['api', 'worker', 'migrate'])(
    'builds %s from the Dockerfile and runs its compiled entry point with node, not through npm',
    (name) => {
      const service = services[name];
      expect(service.build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
      const [node, file] = service.command!;
      expect(node).toBe('node');
      // The compiled file of a source entry point that `npm run build` compiles (tsconfig.build.json).
      expect(existsSync(path.join(ROOT, file.replace(/^dist\//, '').replace(/\.js$/, '.ts')))).toBe(true);
    },
  );

  it('runs the migrations in the migrate one-shot, the API in api and the worker in worker', () => {
    expect(services.migrate.command).toEqual(['node', 'dist/db/migrate-cli.js']);
    expect(services.api.command).toEqual(['node', 'dist/api/main.js']);
    expect(services.worker.command).toEqual(['node', 'dist/worker/main.js']);
  });

  it('registers the search attributes DispatchStatus, IssuerId and CountryCode as Keyword', () => {
    const script = readFileSync(path.join(ROOT, 'deploy', 'temporal', 'setup-namespace.sh'), 'utf8');
    expect(script).toMatch(/search-attribute create .*--type Keyword/);
    expect(script).toMatch(/for name in DispatchStatus IssuerId CountryCode/);
  });

  it('mounts only files that exist in the repository', () => {
    for (const service of Object.values(services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0];
        if (source.startsWith('./')) expect({ source, exists: existsSync(path.join(ROOT, source)) }).toEqual({ source, exists: true });
      }
    }
  });

  const composePlugin = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  const composeMissing = composePlugin.status !== 0 ? 'the docker compose plugin is not installed on this machine' : undefined;
  if (composeMissing) process.stderr.write(`compose.unit.test.ts: skipping \`docker compose config\`: ${composeMissing}\n`);
  (composeMissing ? it.skip : it)(
    `is accepted by \`docker compose config\`${composeMissing ? ` (skipped: ${composeMissing})` : ''}`,
    () => {
      const result = spawnSync('docker', ['compose', '-f', 'docker-compose.yml', 'config', '-q'], { cwd: ROOT, encoding: 'utf8' });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    },
  );
});

describe('Dockerfile', () => {
  it('builds on the official Node 24 image', () => {
    expect(dockerfile).toMatch(/^FROM node:24(-[\w.-]+)?\s*$/m);
  });

  it('installs exactly the locked production dependencies', () => {
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
  });

  it('runs as a non-root user', () => {
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0']).not.toContain(users.at(-1));
  });

  it('exposes 3000 and starts the compiled API by default, node itself as the process (not npm)', () => {
    expect(dockerfile).toMatch(/^EXPOSE 3000$/m);
    expect(dockerfile).toMatch(/^CMD \["node", ?"dist\/api\/main\.js"\]$/m);
  });

  it('keeps node_modules and local data out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.data', '.git', '.env']));
  });

  it('gives the image’s `npm run admin -- … --json` exactly one JSON document on stdout, and a failure one line on stderr (DESIGN §4)', () => {
    // The final stage's /app as far as npm sees it: the files it copies from the build context
    // (not those .dockerignore keeps out), its own `npm pkg set` of the scripts, and a stand-in for
    // the compiled CLI that prints one JSON document, or fails with one line.
    const final = dockerfile.split(/^FROM /m)[2];
    const ignored = new Set(
      readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
        .split('\n')
        .map((line) => line.trim()),
    );
    const copied = [...final.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    const app = mkdtempSync(path.join(tmpdir(), 'cds-image-npm-'));
    try {
      for (const file of copied.filter((f) => !ignored.has(f) && existsSync(path.join(ROOT, f))))
        copyFileSync(path.join(ROOT, file), path.join(app, path.basename(file)));
      const scripts = /^RUN (npm pkg set (?:.*\\\n)*.*)$/m.exec(final)![1].replace(/\\\n/g, ' ');
      // Only the image's own configuration: not the npm_config_* variables npx and npm pass to this test.
      const env = { PATH: process.env.PATH ?? '', HOME: app };
      expect(spawnSync('sh', ['-c', scripts], { cwd: app, env }).status).toBe(0);
      mkdirSync(path.join(app, 'dist/cli'), { recursive: true });
      writeFileSync(
        path.join(app, 'dist/cli/admin.js'),
        `if (process.argv.includes('--fail')) { process.stderr.write('error: unknown issuer: iss_x\\n'); process.exit(1); }\n` +
          `process.stdout.write(JSON.stringify({ data: [] }, null, 2) + '\\n');\n`,
      );
      const ok = spawnSync('npm', ['run', 'admin', '--', 'issuer', 'list', '--json'], { cwd: app, env, encoding: 'utf8' });
      expect({ status: ok.status, stdout: ok.stdout }).toEqual({ status: 0, stdout: '{\n  "data": []\n}\n' });
      const failed = spawnSync('npm', ['run', 'admin', '--', 'issuer', 'list', '--fail'], { cwd: app, env, encoding: 'utf8' });
      expect({ status: failed.status, stdout: failed.stdout, stderr: failed.stderr }).toEqual({
        status: 1,
        stdout: '',
        stderr: 'error: unknown issuer: iss_x\n',
      });
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('limits glibc to two malloc arenas (the worker’s native memory, bench/scale)', () => {
    expect(dockerfile).toMatch(/^ENV .*\bMALLOC_ARENA_MAX=2\b/m);
  });

  it('caps the worker’s V8 heaps as the chart does, and leaves the other services’ heaps alone', () => {
    expect(chartValues.worker.nodeOptions).toMatch(/^--max-old-space-size=\d+$/);
    expect(services.worker.environment?.NODE_OPTIONS).toBe(chartValues.worker.nodeOptions);
    for (const name of ['api', 'migrate']) expect(services[name].environment?.NODE_OPTIONS).toBeUndefined();
    expect(dockerfile).not.toMatch(/NODE_OPTIONS/);
  });
});

describe('the Temporal server of docker-compose', () => {
  it('runs with every dynamic config value the service’s own servers run with (SERVER_DYNAMIC_CONFIG)', () => {
    expect(services.temporal.environment?.DYNAMIC_CONFIG_FILE_PATH).toBe('config/dynamicconfig/production-sql.yaml');
    const file = parse(readFileSync(path.join(ROOT, 'deploy/temporal/dynamicconfig/production-sql.yaml'), 'utf8')) as Record<
      string,
      Array<{ value: unknown; constraints: object }>
    >;
    for (const [key, value] of Object.entries(SERVER_DYNAMIC_CONFIG)) expect(file[key]).toEqual([{ value, constraints: {} }]);
  });
});
