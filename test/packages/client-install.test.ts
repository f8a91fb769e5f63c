// The typed client (packages/client) and the webhook consumer kit (consumer-kit/) as an integrator
// gets them (DESIGN.md §8): installed with `npm install --install-links <folder>` into a plain Node
// project outside the repository (npm copies the folder as it would a registry package, runs its
// `prepare` build and installs its dependencies; without the flag npm only links the folder and
// installs none of them), then used from plain .mjs scripts run by Node, and type-checked from a
// TypeScript consumer against the installed declarations.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { lstat, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { statusRecord } from '../../domain/schemas.js';
import { buildWebhookBody } from '../../domain/webhook-payload.js';
import { generateSecret, signedHeaders } from '../../domain/signing.js';
import { startHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT = path.join(ROOT, 'packages/client');
const KIT = path.join(ROOT, 'consumer-kit');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

let h: Harness;
let key: string;
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
  project = await mkdtemp(path.join(tmpdir(), 'cds-integrator-'));
  const allowScripts = { '@card-delivery/client': true, '@card-delivery/webhook-consumer-kit': true };
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module', allowScripts }));
  // @types/node at the repository's version (in the npm cache already) for the kit's Buffer types.
  const typesNode = JSON.parse(await readFile(path.join(ROOT, 'node_modules/@types/node/package.json'), 'utf8')).version;
  await run(
    'npm',
    [
      'install',
      '--install-links',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      CLIENT,
      KIT,
      `@types/node@${typesNode}`,
    ],
    { cwd: project, env: plainEnv() },
  );
}, 240_000);

afterAll(async () => {
  await h?.stop();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('npm install <folder> into a plain Node project', () => {
  it('installs both packages as built JavaScript with declarations, not as links into the repository', async () => {
    for (const name of ['@card-delivery/client', '@card-delivery/webhook-consumer-kit']) {
      const installed = path.join(project, 'node_modules', name);
      expect((await lstat(installed)).isSymbolicLink()).toBe(false);
      const entry = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8')).exports['.'];
      expect(entry.default).toMatch(/\.js$/);
      expect(entry.types).toMatch(/\.d\.ts$/);
      await expect(lstat(path.join(installed, entry.default))).resolves.toBeTruthy();
      await expect(lstat(path.join(installed, entry.types))).resolves.toBeTruthy();
    }
    // The client's own dependency came with it, into the project.
    await expect(lstat(path.join(project, 'node_modules/openapi-fetch/package.json'))).resolves.toBeTruthy();
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
