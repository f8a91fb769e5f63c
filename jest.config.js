// Jest in native ESM mode: several dependencies (intl-messageformat, node-pg-migrate, …) are ESM-only.
// Run through `npm test`, which sets NODE_OPTIONS=--experimental-vm-modules.
//
// Test folders mirror the source folders (test/domain/ tests domain/, …; test/e2e/ runs whole
// processes). The runtime tier is chosen by the file's suffix, one Jest project each:
//   *.unit.test.ts     unit: pure, no infrastructure; `npm run test:unit` (--selectProjects unit)
//   *.browser.test.ts  browser: the dashboard in Debian's Chromium, against the real service
//   *.test.ts          integration: everything else, against the real Temporal and Postgres
// Only the integration and browser projects name the global setup, and Jest runs a project's global
// setup only when a test of that project runs (once per module path), so the unit tier alone starts
// nothing.
const shared = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
};

const infrastructure = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

/** @type {import('jest').Config} */
export default {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['**/*.unit.test.ts'], setupFiles: ['<rootDir>/test/support/fast-check-limits.ts'] },
    {
      ...shared,
      ...infrastructure,
      displayName: 'integration',
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.unit\\.test\\.ts$', '\\.browser\\.test\\.ts$'],
    },
    { ...shared, ...infrastructure, displayName: 'browser', testMatch: ['**/*.browser.test.ts'] },
  ],
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
