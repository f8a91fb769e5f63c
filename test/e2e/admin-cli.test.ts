// The operator CLI as an operator runs it: a real `tsx cli/admin.ts` subprocess against a real,
// migrated Postgres (global-setup's TEST_DATABASE_URL, or an embedded one of its own when run
// alone). Checks the --json contracts of docs/admin-cli.md "Operator CLI", that a key is shown once and stored only as
// a hash, and the one-line failures.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveTemporalConnection } from '../../cli/admin/context.js';
import { writeRuntimeFile } from '../../cli/runtime-file.js';
import { migrate } from '../../db/migrate.js';
import { createPool, type Pool } from '../../db/pool.js';
import { parseKey, SCOPES } from '../../domain/api-keys.js';
import { loadConfig } from '../../platform/config.js';
import { startPostgres, type RunningPostgres } from '../../devtools/postgres.js';
import { expectOneLineFailure, runCli as runCliProcess } from '../support/cli.js';
import { createScratchDatabase } from '../support/scratch-database.js';

let databaseUrl: string;
let pool: Pool;
let ownPostgres: RunningPostgres | undefined;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'cds-admin-cli-'));
  // As root the embedded Postgres runs as the `postgres` user, which must be able to enter the folder.
  chmodSync(work, 0o755);
  if (process.env.TEST_DATABASE_URL) {
    databaseUrl = process.env.TEST_DATABASE_URL;
  } else {
    ownPostgres = await startPostgres({ dataDir: path.join(work, 'postgres'), persistent: false });
    databaseUrl = ownPostgres.url;
    await migrate(databaseUrl);
  }
  pool = createPool(databaseUrl, { max: 2, applicationName: 'test-admin-cli' });
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await ownPostgres?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** The CLI against this test's database, with a runtime file path of the test's own. */
function runCli(args: string[], env: Record<string, string> = { DATABASE_URL: databaseUrl }) {
  return runCliProcess(args, { CDS_RUNTIME_FILE: path.join(work, 'absent-runtime.json'), ...env });
}

async function newIssuer(name = 'Test Issuer'): Promise<string> {
  const result = await runCli(['issuer', 'create', '--name', name, '--json']);
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { id: string }).id;
}

async function newKey(issuerId: string, ...extra: string[]): Promise<Record<string, unknown>> {
  const result = await runCli(['key', 'create', '--issuer', issuerId, '--json', ...extra]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('issuer create', () => {
  it('prints exactly { id, name } as JSON with an iss_ + 16 base62 id, and stores the issuer', async () => {
    const result = await runCli(['issuer', 'create', '--name', 'Acme Bank', '--json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const body = JSON.parse(result.stdout);
    expect(Object.keys(body).sort()).toEqual(['id', 'name']);
    expect(body.id).toMatch(/^iss_[0-9A-Za-z]{16}$/);
    expect(body.name).toBe('Acme Bank');
    const { rows } = await pool.query('SELECT name FROM issuers WHERE id = $1', [body.id]);
    expect(rows).toEqual([{ name: 'Acme Bank' }]);
  });

  it('accepts --json before the command name', async () => {
    const result = await runCli(['--json', 'issuer', 'create', '--name', 'Global Flag Bank']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).name).toBe('Global Flag Bank');
  });

  it('prints the new id in human text without --json', async () => {
    const result = await runCli(['issuer', 'create', '--name', 'Human Bank']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Created issuer "Human Bank": iss_[0-9A-Za-z]{16}\n/);
  });

  it('refuses an empty name with a one-line reason', async () => {
    expectOneLineFailure(await runCli(['issuer', 'create', '--name', '  ']), /^error: invalid --name: must not be empty$/);
  });
});

describe('key create', () => {
  it('prints exactly { id, key, issuer_id, scopes, mode } as JSON, with every scope by default', async () => {
    const issuerId = await newIssuer();
    const body = await newKey(issuerId);
    expect(Object.keys(body).sort()).toEqual(['id', 'issuer_id', 'key', 'mode', 'scopes']);
    expect(body.id).toMatch(/^key_[0-9A-Za-z]{16}$/);
    expect(body.key).toMatch(/^cds_live_/);
    expect(body.issuer_id).toBe(issuerId);
    expect(body.scopes).toEqual([...SCOPES]);
    expect(body.mode).toBe('live');
  });

  it('prints a key that parseKey accepts', async () => {
    const body = await newKey(await newIssuer());
    const parsed = parseKey(body.key as string);
    expect(parsed).toBeDefined();
    expect(parsed!.mode).toBe('live');
  });

  it('stores only the lookup and the SHA-256 of the key, never the key', async () => {
    const body = await newKey(await newIssuer());
    const key = body.key as string;
    const { rows } = await pool.query('SELECT * FROM api_keys WHERE id = $1', [body.id]);
    expect(rows).toHaveLength(1);
    const row = rows[0] as Record<string, unknown>;
    for (const [column, value] of Object.entries(row)) {
      const text = Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value);
      expect({ column, containsKey: text?.includes(key) ?? false }).toEqual({ column, containsKey: false });
    }
    expect((row.key_hash as Buffer).equals(createHash('sha256').update(key).digest())).toBe(true);
    expect(row.lookup).toBe(parseKey(key)!.lookup);
  });

  it('shows the key exactly once in human output', async () => {
    const issuerId = await newIssuer();
    const result = await runCli(['key', 'create', '--issuer', issuerId]);
    expect(result.code).toBe(0);
    const keys = result.stdout.match(/cds_live_[0-9A-Za-z]{38}/g) ?? [];
    expect(keys).toHaveLength(1);
    expect(result.stdout).toMatch(/shown only once/);
  });

  it('keeps exactly the scopes given with --scopes', async () => {
    const body = await newKey(await newIssuer(), '--scopes', 'status:read,events:write');
    expect(body.scopes).toEqual(['status:read', 'events:write']);
    const { rows } = await pool.query('SELECT scopes FROM api_keys WHERE id = $1', [body.id]);
    expect(rows[0].scopes).toEqual(['status:read', 'events:write']);
  });

  it('refuses an unknown scope with a one-line reason and creates no key', async () => {
    const issuerId = await newIssuer();
    const result = await runCli(['key', 'create', '--issuer', issuerId, '--scopes', 'status:read,admin:all', '--json']);
    expectOneLineFailure(result, /unknown scope "admin:all"/);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM api_keys WHERE issuer_id = $1', [issuerId]);
    expect(rows[0].n).toBe(0);
  });

  it('creates a cds_test_ key in test mode with --test', async () => {
    const body = await newKey(await newIssuer(), '--test');
    expect(body.key).toMatch(/^cds_test_/);
    expect(body.mode).toBe('test');
    expect(parseKey(body.key as string)!.mode).toBe('test');
    const { rows } = await pool.query('SELECT mode FROM api_keys WHERE id = $1', [body.id]);
    expect(rows[0].mode).toBe('test');
  });

  it('refuses an unknown issuer with a one-line reason', async () => {
    expectOneLineFailure(
      await runCli(['key', 'create', '--issuer', 'iss_doesNotExist00', '--json']),
      /^error: unknown issuer: iss_doesNotExist00$/,
    );
  });
});

describe('key revoke', () => {
  it('sets revoked_at and prints { id, revoked_at }', async () => {
    const key = await newKey(await newIssuer());
    const result = await runCli(['key', 'revoke', '--key-id', key.id as string, '--json']);
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(Object.keys(body).sort()).toEqual(['id', 'revoked_at']);
    expect(body.id).toBe(key.id);
    const { rows } = await pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [key.id]);
    expect((rows[0].revoked_at as Date).toISOString()).toBe(body.revoked_at);
  });

  it('is idempotent: revoking again succeeds and keeps the first revocation time', async () => {
    const key = await newKey(await newIssuer());
    const first = JSON.parse((await runCli(['key', 'revoke', '--key-id', key.id as string, '--json'])).stdout);
    const again = await runCli(['key', 'revoke', '--key-id', key.id as string, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).revoked_at).toBe(first.revoked_at);
  });

  it('refuses an unknown key id with a one-line reason', async () => {
    expectOneLineFailure(await runCli(['key', 'revoke', '--key-id', 'key_doesNotExist00']), /^error: unknown key: key_doesNotExist00$/);
  });
});

describe('lists', () => {
  it('key list shows prefixes and states, never keys or hashes', async () => {
    const issuerId = await newIssuer();
    const live = await newKey(issuerId);
    const test = await newKey(issuerId, '--test', '--scopes', 'status:read');
    await runCli(['key', 'revoke', '--key-id', live.id as string]);
    const result = await runCli(['key', 'list', '--issuer', issuerId, '--json']);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(live.key as string);
    expect(result.stdout).not.toContain(test.key as string);
    expect(result.stdout).not.toMatch(/hash/);
    const { data } = JSON.parse(result.stdout) as { data: Array<Record<string, unknown>> };
    const byId = new Map(data.map((k) => [k.id, k]));
    expect(byId.get(live.id)).toMatchObject({
      issuer_id: issuerId,
      mode: 'live',
      prefix: expect.stringMatching(/^cds_live_/),
      last_used_at: null,
    });
    expect(byId.get(live.id)!.revoked_at).toEqual(expect.any(String));
    expect(byId.get(test.id)).toMatchObject({ mode: 'test', scopes: ['status:read'], revoked_at: null });
    expect((test.key as string).startsWith(byId.get(test.id)!.prefix as string)).toBe(true);
  });

  it('issuer list includes each issuer with its number of active keys', async () => {
    const issuerId = await newIssuer('Listed Bank');
    await newKey(issuerId);
    const result = await runCli(['issuer', 'list', '--json']);
    expect(result.code).toBe(0);
    const { data } = JSON.parse(result.stdout) as { data: Array<Record<string, unknown>> };
    expect(data.find((i) => i.id === issuerId)).toMatchObject({ name: 'Listed Bank', active_keys: 1 });
  });
});

describe('predictions quality --issuer', () => {
  it('refuses an unknown issuer with a one-line reason rather than an empty report, also with --json', async () => {
    for (const json of [[], ['--json']])
      expectOneLineFailure(
        await runCli(['predictions', 'quality', '--issuer', 'iss_doesNotExist0000', ...json]),
        /^error: unknown issuer: iss_doesNotExist0000$/,
      );
  });

  it('reports an issuer without deliveries as nothing to compare yet', async () => {
    const issuerId = await newIssuer('Quality Bank');
    const result = await runCli(['predictions', 'quality', '--issuer', issuerId, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ data: [], dispatches: 0, not_learned: { dispatches: 0 } });
  });
});

describe('predictions quality of an issuer with hundreds of deliveries', () => {
  it('never prints a coverage below the target as reaching it: 226 of 233 High deliveries inside is 96.99 %, not 97 %', async () => {
    // 226/233 = 0.969957: rounded to four decimals it would read 0.97, the target, beside a verdict
    // that says the target was not met.
    const issuerId = await newIssuer('Busy Bank');
    await pool.query(
      `INSERT INTO prediction_outcomes (issuer_id, mode, country_code, dispatch_date, confidence_level, window_min, window_max,
                                        delivered_date, learned, not_learned_reasons)
       SELECT $1, 'live', 'FR', '2026-10-01', 'High', '2026-10-05', '2026-10-07',
              CASE WHEN i <= 226 THEN '2026-10-06' ELSE '2026-10-09' END::date, true, '{}'
         FROM generate_series(1, 233) i`,
      [issuerId],
    );
    const json = await runCli(['predictions', 'quality', '--issuer', issuerId, '--json']);
    expect(json.code).toBe(0);
    const high = (JSON.parse(json.stdout) as { data: Array<Record<string, unknown>> }).data[0];
    expect(high).toMatchObject({ confidence_level: 'High', dispatches: 233, inside: 226, target: 0.97, verdict: 'within_noise' });
    expect(high.coverage).toBeLessThan(0.97);
    const human = await runCli(['predictions', 'quality', '--issuer', issuerId]);
    const highLine = human.stdout.split('\n').find((line) => line.startsWith('High'));
    expect(highLine).toMatch(/^High\s+233\s+226\s+96\.9 %/);
  });
});

describe('mistyped commands and options', () => {
  it('fails in one line, the suggestion on it, for a mistyped command, subcommand or option', async () => {
    expectOneLineFailure(await runCli(['isuer', 'list']), /^error: unknown command 'isuer' \(Did you mean issuer\?\)$/);
    expectOneLineFailure(await runCli(['issuer', 'crate', '--name', 'X']), /^error: unknown command 'crate' \(Did you mean create\?\)$/);
    expectOneLineFailure(await runCli(['issuer', 'list', '--jsn']), /^error: unknown option '--jsn' \(Did you mean --json\?\)$/);
  });

  it('fails in one line, naming the commands to choose from, when the command is missing; --help still prints the usage', async () => {
    expectOneLineFailure(
      await runCli(['dispatch'], {}),
      /^error: missing command: dispatch needs one of erase, footprint \(npm run admin -- dispatch --help\)$/,
    );
    expectOneLineFailure(await runCli([], {}), /^error: missing command: one of issuer, key, .*, dispatch \(npm run admin -- --help\)$/);
    const help = await runCli(['dispatch', '--help'], {});
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: admin dispatch \[options\] \[command\]\n[\s\S]*\n {2}footprint /);
  });

  it('refuses a number option that is not written in decimal digits, naming it and its range, before reaching the database', async () => {
    const commands: Array<[string[], string, string]> = [
      [['deliveries', 'list'], '--limit', 'must be a whole number 1–1000'],
      [['retention', 'run'], '--batch-size', 'must be a whole number 1–10000'],
      [['conditions', 'set', '--country', 'FR'], '--delay-days', 'must be a whole number 1–60'],
    ];
    const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    for (const [command, option, rule] of commands) {
      // Not NaN's wording for `abc`, not 0 for a blank value, not 10 for `1e1`: what to write instead.
      // Each command's wiring here; the rule itself, for every text, in test/cli/parse-options.unit.test.ts.
      for (const value of ['abc', ' ', '1e1']) {
        expectOneLineFailure(await runCli([...command, option, value], {}), exactly(`error: invalid ${option}: ${rule}`));
      }
    }
  }, 120_000);
});

describe('which database', () => {
  const runtimeBase = {
    databaseUrl: 'postgres://u:p@127.0.0.1:5432/db',
    apiUrl: 'http://127.0.0.1:3000',
    temporalAddress: '127.0.0.1:7233',
  };

  it('without DATABASE_URL or a runtime file, says how to get a database', async () => {
    expectOneLineFailure(
      await runCli(['issuer', 'list'], {}),
      /^error: no database: start the service with `npm start` or set DATABASE_URL$/,
    );
  });

  it('without DATABASE_URL, uses the database named in the runtime file of a running `npm start`', async () => {
    const file = path.join(work, 'runtime-live.json');
    writeRuntimeFile({ databaseUrl, apiUrl: 'http://127.0.0.1:3000', temporalAddress: '127.0.0.1:7233', pid: process.pid }, file);
    const result = await runCli(['issuer', 'create', '--name', 'Runtime File Bank', '--json'], { CDS_RUNTIME_FILE: file });
    expect(result.code).toBe(0);
    const { rows } = await pool.query('SELECT name FROM issuers WHERE id = $1', [JSON.parse(result.stdout).id]);
    expect(rows).toEqual([{ name: 'Runtime File Bank' }]);
  });

  it("without TEMPORAL_ADDRESS, reaches the running `npm start`'s Temporal namespace and task queue, unless told others", () => {
    const file = path.join(work, 'runtime-temporal.json');
    writeRuntimeFile({ ...runtimeBase, temporalNamespace: 'cards', temporalTaskQueue: 'cards-queue', pid: process.pid }, file);
    const resolve = (env: Record<string, string>) => resolveTemporalConnection(loadConfig(env), env, file);
    expect(resolve({})).toEqual({ options: { address: '127.0.0.1:7233' }, namespace: 'cards', taskQueue: 'cards-queue' });
    // An explicit variable wins, as TEMPORAL_ADDRESS does over the file's address.
    expect(resolve({ TEMPORAL_NAMESPACE: 'other' })).toMatchObject({ namespace: 'other', taskQueue: 'cards-queue' });
    expect(resolve({ TEMPORAL_TASK_QUEUE: 'other-queue' })).toMatchObject({ namespace: 'cards', taskQueue: 'other-queue' });
    // Another Temporal than the file's: the configuration's namespace and queue (their defaults), never the file's.
    expect(resolve({ TEMPORAL_ADDRESS: 'temporal.example:7233' })).toEqual({
      options: { address: 'temporal.example:7233' },
      namespace: 'default',
      taskQueue: 'card-delivery',
    });
    // A file of an `npm start` from before they were written: the configuration's.
    writeRuntimeFile({ ...runtimeBase, pid: process.pid }, file);
    expect(resolve({})).toMatchObject({ namespace: 'default', taskQueue: 'card-delivery' });
  });

  it('ignores a runtime file left behind by a process that no longer runs', async () => {
    const file = path.join(work, 'runtime-stale.json');
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    writeRuntimeFile({ databaseUrl, apiUrl: 'http://127.0.0.1:3000', temporalAddress: '127.0.0.1:7233', pid: deadPid }, file);
    expectOneLineFailure(await runCli(['issuer', 'list'], { CDS_RUNTIME_FILE: file }), /^error: no database: .*no longer running/);
  });

  it('reports a database without our tables as not migrated', async () => {
    const unmigrated = await createScratchDatabase('cds_unmigrated', { serverUrl: databaseUrl });
    try {
      expectOneLineFailure(
        await runCli(['issuer', 'create', '--name', 'X'], { DATABASE_URL: unmigrated.url }),
        /^error: database not migrated: run npm start or npm run migrate$/,
      );
    } finally {
      await unmigrated.drop();
    }
  });
});
