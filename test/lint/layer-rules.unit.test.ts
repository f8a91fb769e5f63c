// The layers are enforced by ESLint (eslint.config.js): this lints one deliberately wrong file per
// rule, from test/fixtures/layers/, with the project's own configuration, and checks that each is
// reported under the rule that guards it, and that the correct fixtures are clean. `eslint .`
// ignores the fixtures (so the build stays green); here that ignore is switched off.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURES = path.join(ROOT, 'test/fixtures/layers');

const WRONG = {
  'domain/imports-pg.ts': '@typescript-eslint/no-restricted-imports',
  'db/imports-api.ts': '@typescript-eslint/no-restricted-imports',
  'db/imports-ingest.ts': '@typescript-eslint/no-restricted-imports',
  'ingest/imports-route.ts': '@typescript-eslint/no-restricted-imports',
  'platform/imports-temporal.ts': '@typescript-eslint/no-restricted-imports',
  'temporal/imports-ingest.ts': '@typescript-eslint/no-restricted-imports',
  'db/imports-temporal.ts': '@typescript-eslint/no-restricted-imports',
  'api/imports-devtools.ts': 'no-restricted-imports',
  'workflows/imports-node-fs.ts': '@typescript-eslint/no-restricted-imports',
  'workflows/imports-activity.ts': '@typescript-eslint/no-restricted-imports',
  'promises/floating.ts': '@typescript-eslint/no-floating-promises',
  'cycle/a.ts': 'local/no-import-cycle',
  'type-cycle/a.ts': 'local/no-import-cycle',
  'type-cycle/b.ts': 'local/no-import-cycle',
} as const;
const CORRECT = [
  'domain/pure.ts',
  'db/uses-domain.ts',
  'temporal/uses-platform.ts',
  'workflows/correct.ts',
  'promises/awaited.ts',
  'activities/index.ts',
  'cli/start.ts',
];

/** Messages per fixture (relative to FIXTURES), as `ruleId: message`. */
let reported: Map<string, string[]>;

beforeAll(async () => {
  const eslint = new ESLint({ cwd: ROOT, ignore: false });
  const files = [...Object.keys(WRONG), ...CORRECT].map((file) => path.join(FIXTURES, file));
  const results = await eslint.lintFiles(files);
  reported = new Map(results.map((r) => [path.relative(FIXTURES, r.filePath), r.messages.map((m) => `${m.ruleId}: ${m.message}`)]));
}, 120_000);

const rulesOf = (file: string): string[] => (reported.get(file) ?? []).map((m) => m.slice(0, m.indexOf(':')));

describe('layer rules', () => {
  it('reports domain/ importing pg (I/O) as a restricted import', () => {
    expect(rulesOf('domain/imports-pg.ts')).toEqual([WRONG['domain/imports-pg.ts']]);
    expect(reported.get('domain/imports-pg.ts')![0]).toContain("'pg'");
  });

  it('reports db/ importing api/ as a restricted import', () => {
    expect(rulesOf('db/imports-api.ts')).toEqual([WRONG['db/imports-api.ts']]);
    expect(reported.get('db/imports-api.ts')![0]).toContain("'../api/app.js'");
  });

  it('reports db/ importing ingest/ (the layer above it) as a restricted import', () => {
    expect(rulesOf('db/imports-ingest.ts')).toEqual([WRONG['db/imports-ingest.ts']]);
    expect(reported.get('db/imports-ingest.ts')![0]).toContain("'../ingest/carrier-events.js'");
  });

  it('reports ingest/ importing a route of api/ as a restricted import', () => {
    expect(rulesOf('ingest/imports-route.ts')).toEqual([WRONG['ingest/imports-route.ts']]);
    expect(reported.get('ingest/imports-route.ts')![0]).toContain("'../api/routes/carrier-events.js'");
  });

  it('reports platform/ importing any of our folders (here temporal/) as a restricted import', () => {
    expect(rulesOf('platform/imports-temporal.ts')).toEqual([WRONG['platform/imports-temporal.ts']]);
    expect(reported.get('platform/imports-temporal.ts')![0]).toContain("'../temporal/client.js'");
  });

  it('reports temporal/ importing a layer that calls it (ingest/) as a restricted import', () => {
    expect(rulesOf('temporal/imports-ingest.ts')).toEqual([WRONG['temporal/imports-ingest.ts']]);
    expect(reported.get('temporal/imports-ingest.ts')![0]).toContain("'../ingest/webhook-replays.js'");
  });

  it('reports db/ importing temporal/ (which sits above it) as a restricted import', () => {
    expect(rulesOf('db/imports-temporal.ts')).toEqual([WRONG['db/imports-temporal.ts']]);
    expect(reported.get('db/imports-temporal.ts')![0]).toContain("'../temporal/client.js'");
  });

  it('reports a production folder importing devtools/ (the development engines) as a restricted import', () => {
    expect(rulesOf('api/imports-devtools.ts')).toEqual([WRONG['api/imports-devtools.ts']]);
    expect(reported.get('api/imports-devtools.ts')![0]).toContain("'../devtools/postgres.js'");
  });

  it('reports workflow code importing node:fs as a restricted import', () => {
    expect(rulesOf('workflows/imports-node-fs.ts')).toEqual([WRONG['workflows/imports-node-fs.ts']]);
    expect(reported.get('workflows/imports-node-fs.ts')![0]).toContain("'node:fs'");
  });

  it('reports workflow code importing an activity implementation (not `import type`) as a restricted import', () => {
    expect(rulesOf('workflows/imports-activity.ts')).toEqual([WRONG['workflows/imports-activity.ts']]);
    expect(reported.get('workflows/imports-activity.ts')![0]).toContain("'../activities/index.js'");
  });

  it('reports a promise that is neither awaited nor voided', () => {
    expect(rulesOf('promises/floating.ts')).toEqual([WRONG['promises/floating.ts']]);
  });

  it('reports two files that import each other as a cycle', () => {
    expect(rulesOf('cycle/a.ts')).toEqual([WRONG['cycle/a.ts']]);
  });

  it('reports a cycle that a type-only import closes, on both of its files', () => {
    expect(rulesOf('type-cycle/a.ts')).toEqual([WRONG['type-cycle/a.ts']]);
    expect(rulesOf('type-cycle/b.ts')).toEqual([WRONG['type-cycle/b.ts']]);
    expect(reported.get('type-cycle/a.ts')![0]).toContain(
      'type-cycle/a.ts → test/fixtures/layers/type-cycle/b.ts → test/fixtures/layers/type-cycle/a.ts',
    );
  });

  it('leaves the fixtures out of `eslint .`, so the build stays green', async () => {
    const eslint = new ESLint({ cwd: ROOT });
    expect(await eslint.isPathIgnored(path.join(FIXTURES, 'domain/imports-pg.ts'))).toBe(true);
    expect(await eslint.isPathIgnored(path.join(ROOT, 'domain/dispatch-schemas.ts'))).toBe(false);
  });

  it.each(CORRECT)('reports nothing in the correct fixture %s', (file) => {
    expect(reported.get(file)).toEqual([]);
  });
});
