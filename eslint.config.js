// ESLint (flat config). As in the Temporal samples, workflow code may not import Node modules or
// activity implementations: the workflow sandbox is deterministic and bundles only what it imports.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'coverage/', 'scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // Tests read untyped JSON bodies; asserting on them is the point.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'crypto', 'http', 'https', 'net', 'os', 'child_process'],
              message: 'Workflow code is deterministic: no Node modules.',
            },
            { group: ['**/activities/**'], allowTypeImports: true, message: 'Import activities with `import type` only.' },
            {
              group: ['pg', 'koa', '@koa/*', 'pino', '@temporalio/activity', '@temporalio/worker', '@temporalio/client'],
              message: 'Not in the workflow sandbox.',
            },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
);
