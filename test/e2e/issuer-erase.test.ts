// `npm run admin -- issuer erase --issuer ID --confirm` from outside (docs/admin-cli.md "Erasure"): an
// unknown issuer is a failed command (one line, non-zero), not a report of nothing erased, while an
// issuer it erased may be erased again. The broader behaviour (keys, endpoints, users, branding, a
// run that died and is run again) is in test/api/erasure.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectOneLineFailure, runCli } from '../support/cli.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
const cliEnv = () => ({
  DATABASE_URL: h.config.DATABASE_URL!,
  TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
  TEMPORAL_TASK_QUEUE: h.taskQueue,
  WEBHOOK_TIMEOUT_MS: '1000',
});

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_TIMEOUT_MS: '1000' } });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('issuer erase', () => {
  it('refuses an unknown issuer with a one-line reason', async () => {
    const result = await runCli(['issuer', 'erase', '--issuer', 'iss_0000000000000000', '--confirm', '--json'], cliEnv());
    expectOneLineFailure(result, /unknown issuer: iss_0000000000000000/);
  });

  it('run again on an issuer it erased, succeeds with nothing left to erase', async () => {
    const issuer = await h.createIssuer('Erased Twice');
    expect((await runCli(['issuer', 'erase', '--issuer', issuer, '--confirm', '--json'], cliEnv())).code).toBe(0);
    const again = await runCli(['issuer', 'erase', '--issuer', issuer, '--confirm', '--json'], cliEnv());
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ issuer_id: issuer, erased_dispatches: 0 });
  }, 60_000);
});
