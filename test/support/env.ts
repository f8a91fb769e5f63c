// Small helpers every test file shares: the infrastructure global-setup started (read from the
// environment), a quiet logger, and unique ids so test files never collide in the shared database.
import { randomBytes } from 'node:crypto';
import { createLogger } from '../../platform/logger.js';

export function testLogger(name: string) {
  return createLogger({ name, level: process.env.TEST_LOG_LEVEL ?? 'silent', destination: 2 });
}

export function requireTestEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`npm test\` (jest global-setup starts the infrastructure)`);
  return value;
}

export function randomId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}
