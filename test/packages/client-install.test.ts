// The typed client (packages/client) and the webhook consumer kit (consumer-kit/) as an integrator
// gets them (packages/client/README.md): installed with plain `npm install <folder>` into a plain Node project
// outside the repository, then used from plain .mjs scripts run by Node, and type-checked from a
// TypeScript consumer against the installed declarations. The folders are those of a fresh
// checkout: copied from the working tree without any built dist/, beside the repository's installed
// node_modules (what `npm ci` at a clone's root gives). npm links each folder and runs its `prepare`
// build there; the packages' imports (openapi-fetch, zod) resolve from the link's real path, in the
// checkout's node_modules, as Node and TypeScript both follow symbolic links.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, lstat, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { statusRecord } from '../../domain/dispatch-schemas.js';
import { buildWebhookBody } from '../../domain/webhook-payload.js';
import { generateSecret, signedHeaders } from '../../domain/signing.js';
import { startHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

let h: Harness;
let key: string;
let scratch: string;
let checkout: string;
let project: string;

/** The environment of a plain shell: no Jest VM-modules flag, no npm settings of the repository's own run. */
function plainEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS' && !/^npm_/i.test(name)));
}

async function node(script: string, args: string[] = []): Promise<any> {
  await writeFile(path.join(project, 'script.mjs'), script);
  const { stdout } = await run(process.execPath, ['script.mjs', ...args], { cwd: project, env: plainEnv() });
  return JSON.parse(stdout);
}

/** Type-checks one consumer file against the installed declarations: its exit code and output. */
async function typeCheck(name: string, source: string): Promise<{ code: number; output: string }> {
  await writeFile(path.join(project, name), source);
  const flags = [
    '--noEmit',
    '--strict',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--types',
    'node',
    '--skipLibCheck',
  ];
  try {
    const { stdout } = await run(process.execPath, [TSC, ...flags, name], { cwd: project, env: plainEnv() });
    return { code: 0, output: stdout };
  } catch (error: any) {
    return { code: error.code, output: `${error.stdout}${error.stderr}` };
  }
}

beforeAll(async () => {
  h = await startHarness();
  key = (await h.createKey(await h.createIssuer('Typed Client Issuer'))).key;
  scratch = await mkdtemp(path.join(tmpdir(), 'cds-integrator-'));
  // A fresh checkout's folders: what git tracks of them (no dist/, no node_modules), and the root's dependencies.
  checkout = path.join(scratch, 'checkout');
  for (const folder of ['packages/client', 'consumer-kit', 'domain']) {
    await cp(path.join(ROOT, folder), path.join(checkout, folder), {
      recursive: true,
      filter: (source) => !/[/\\](dist|node_modules)$/.test(source),
    });
  }
  // The root package.json too: its "type": "module" makes tsc emit the kit's copy of domain/ as ES modules.
  await cp(path.join(ROOT, 'package.json'), path.join(checkout, 'package.json'));
  await symlink(path.join(ROOT, 'node_modules'), path.join(checkout, 'node_modules'));
  project = path.join(scratch, 'integrator');
  await mkdir(project);
  // npm 11 asks the project to approve a dependency's install scripts (`npm install-scripts approve`): the folders' prepare builds them.
  const allowScripts = { '@card-delivery/client': true, '@card-delivery/webhook-consumer-kit': true };
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module', allowScripts }));
  // @types/node at the repository's version (in the npm cache already) for the kit's Buffer types.
  const typesNode = JSON.parse(await readFile(path.join(ROOT, 'node_modules/@types/node/package.json'), 'utf8')).version;
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      path.join(checkout, 'packages/client'),
      path.join(checkout, 'consumer-kit'),
      `@types/node@${typesNode}`,
    ],
    { cwd: project, env: plainEnv() },
  );
}, 240_000);

afterAll(async () => {
  await h?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('npm install <folder> into a plain Node project', () => {
  it('links both folders, built by their prepare into JavaScript with declarations, their dependencies resolved from the checkout', async () => {
    for (const [name, folder] of [
      ['@card-delivery/client', 'packages/client'],
      ['@card-delivery/webhook-consumer-kit', 'consumer-kit'],
    ]) {
      const installed = path.join(project, 'node_modules', name);
      expect((await lstat(installed)).isSymbolicLink()).toBe(true);
      expect(await realpath(installed)).toBe(await realpath(path.join(checkout, folder)));
      const entry = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8')).exports['.'];
      expect(entry.default).toMatch(/^\.\/dist\/.*\.js$/);
      expect(entry.types).toMatch(/^\.\/dist\/.*\.d\.ts$/);
      await expect(lstat(path.join(installed, entry.default))).resolves.toBeTruthy();
      await expect(lstat(path.join(installed, entry.types))).resolves.toBeTruthy();
    }
    // Not installed into the project: Node finds them from the packages' real paths.
    await expect(lstat(path.join(project, 'node_modules/openapi-fetch'))).rejects.toThrow();
    const resolved = await node(
      `import { createRequire } from 'node:module';
       import { realpathSync } from 'node:fs';
       const from = (name) => createRequire(realpathSync('node_modules/' + name + '/package.json'));
       console.log(JSON.stringify({
         fetch: from('@card-delivery/client').resolve('openapi-fetch'),
         zod: from('@card-delivery/webhook-consumer-kit').resolve('zod'),
       }));`,
    );
    const repositoryModules = path.join(await realpath(ROOT), 'node_modules');
    expect(await realpath(resolved.fetch)).toContain(`${repositoryModules}/openapi-fetch/`);
    expect(await realpath(resolved.zod)).toContain(`${repositoryModules}/zod/`);
  });

  it('the client registers a dispatch and reads its status from the running API, with the key as a Bearer token', async () => {
    const id = randomUUID();
    const result = await node(
      `import { createClient } from '@card-delivery/client';
       const [baseUrl, apiKey, id] = process.argv.slice(2);
       const api = createClient({ baseUrl, apiKey });
       const created = await api.POST('/v1/dispatches', { body: { id, destination: { postal_code: '75011', country_code: 'FR' } } });
       const read = await api.GET('/v1/status/{id}', { params: { path: { id } } });
       const refused = await createClient({ baseUrl, apiKey: 'cds_live_not_a_key' }).GET('/v1/status/{id}', { params: { path: { id } } });
       console.log(JSON.stringify({
         created: { status: created.response.status, data: created.data },
         read: { status: read.response.status, data: read.data },
         refused: { status: refused.response.status, error: refused.error },
       }));`,
      [h.baseUrl, key, id],
    );
    expect(result.created).toMatchObject({ status: 201, data: { id, status: 'dispatched' } });
    expect(result.read.status).toBe(200);
    expect(statusRecord.parse(result.read.data)).toMatchObject({ id, destination: { postal_code: '75011', country_code: 'FR' } });
    expect(result.refused).toMatchObject({ status: 401, error: { error: 'unauthorized' } });
  });

  it('the consumer kit verifies and parses a body signed with a known secret, and rejects it with another secret', async () => {
    const secret = generateSecret();
    const dispatchId = randomUUID();
    const body = buildWebhookBody({
      type: 'status.updated',
      timestamp: new Date().toISOString(),
      data: {
        id: dispatchId,
        status: 'in_transit',
        dispatch_date: '2026-11-18T08:00:00.000Z',
        destination: { postal_code: '75011', country_code: 'FR' },
        prediction: { delivery_window: { min: '2026-11-20', max: '2026-11-22' }, confidence_level: 'High' },
        ui_suggestion: { locale: 'en-GB', recommended_message: 'Your card is on its way.', recommended_action: 'None' },
      },
    });
    const headers = signedHeaders({ eventId: 'evt_install', attempt: 1, body, secrets: { current: secret }, now: new Date() });
    await writeFile(path.join(project, 'request.json'), JSON.stringify({ body, headers }));
    const result = await node(
      `import { readFileSync } from 'node:fs';
       import { parse, verify, verifyRequest } from '@card-delivery/webhook-consumer-kit';
       const [secret, otherSecret] = process.argv.slice(2);
       const { body, headers } = JSON.parse(readFileSync('request.json', 'utf8'));
       console.log(JSON.stringify({
         signature: verify(body, headers['X-Service-Signature'], secret),
         request: verifyRequest(body, headers, [secret]).ok,
         otherSecret: verify(body, headers['X-Service-Signature'], otherSecret),
         otherSecretRequest: verifyRequest(body, headers, [otherSecret]).ok,
         parsed: parse(body).data.id,
       }));`,
      [secret, generateSecret()],
    );
    expect(result).toEqual({ signature: true, request: true, otherSecret: false, otherSecretRequest: false, parsed: dispatchId });
  });

  describe('a TypeScript consumer type-checks against the installed declarations', () => {
    const consumer = (registration: string, field: string) => `
      import { createClient, type Schema } from '@card-delivery/client';
      import { parse, verify } from '@card-delivery/webhook-consumer-kit';
      const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'cds_test_example' });
      export async function register(id: string): Promise<Schema<'DispatchStatusRecord'> | undefined> {
        const { data } = await api.POST('/v1/dispatches', { body: { id, ${registration} } });
        return data;
      }
      export function postalCode(body: string, signature: string): string | undefined {
        if (!verify(body, signature, 'whsec_example')) return undefined;
        const event = parse(body); // narrowed on \`event\`: only a card's events carry a status record
        return event.event === 'webhook_endpoint.disabled' ? undefined : event.data.destination.${field};
      }
    `;

    it('passes with the right field names', async () => {
      const { code, output } = await typeCheck(
        'right.ts',
        consumer(`destination: { postal_code: '75011', country_code: 'FR' }`, 'postal_code'),
      );
      expect(output).toBe('');
      expect(code).toBe(0);
    });

    it("fails on a wrong field of the client's request body", async () => {
      const { code, output } = await typeCheck(
        'wrong-client.ts',
        consumer(`destination: { postal_code: '75011', country: 'FR' }`, 'postal_code'),
      );
      expect(code).not.toBe(0);
      expect(output).toMatch(/wrong-client\.ts.*error TS\d+:.*'country'/);
    });

    it("fails on a wrong field of the kit's parsed event", async () => {
      const { code, output } = await typeCheck(
        'wrong-kit.ts',
        consumer(`destination: { postal_code: '75011', country_code: 'FR' }`, 'zip'),
      );
      expect(code).not.toBe(0);
      expect(output).toMatch(/wrong-kit\.ts.*error TS\d+:.*'zip'/);
    });
  });
});
