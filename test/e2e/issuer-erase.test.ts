// `npm run admin -- issuer erase --issuer ID --confirm` from outside (docs/admin-cli.md "Erasure"): an
// unknown issuer is a failed command (one line, non-zero), not a report of nothing erased, while an
// issuer it erased may be erased again; and an issuer whose backend still sends registrations while
// the command runs is left with no dispatch at all: its keys are refused from the start, and every
// dispatch they registered meanwhile is erased too. The broader behaviour (keys, endpoints, users,
// branding, a run that died and is run again) is in test/api/erasure.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dispatchFootprint } from '../../db/erasure.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { expectOneLineFailure, runCli } from '../support/cli.js';
import { startHarness, type Harness } from '../support/harness.js';
import { until } from '../support/until.js';

let h: Harness;
const cliEnv = () => ({
  DATABASE_URL: h.config.DATABASE_URL!,
  TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
  TEMPORAL_TASK_QUEUE: h.taskQueue,
  WEBHOOK_TIMEOUT_MS: '1000',
});
const register = (key: string, id = randomUUID()) =>
  request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) });

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

  it('leaves an issuer that takes no new key, dashboard user or webhook endpoint: a departed issuer cannot be handed access again', async () => {
    const issuer = await h.createIssuer('Departed');
    expect((await runCli(['issuer', 'erase', '--issuer', issuer, '--confirm', '--json'], cliEnv())).code).toBe(0);
    for (const args of [
      ['key', 'create', '--issuer', issuer],
      ['user', 'create', '--issuer', issuer, '--email', 'ops@departed.example'],
      ['webhook', 'add', '--issuer', issuer, '--url', 'https://93.184.216.34/cards', '--events', 'status.updated'],
    ]) {
      expectOneLineFailure(await runCli([...args, '--json'], cliEnv()), new RegExp(`issuer ${issuer} was erased on \\d{4}-`));
    }
    const left = await h.pool.query('SELECT (SELECT count(*) FROM api_keys WHERE issuer_id = $1)::int + (SELECT count(*) FROM dashboard_users WHERE issuer_id = $1)::int + (SELECT count(*) FROM webhook_endpoints WHERE issuer_id = $1)::int AS n', [issuer]); // prettier-ignore
    expect(left.rows[0].n).toBe(0);
  }, 60_000);

  it('leaves no dispatch of the issuer, also those its keys registered while the command ran', async () => {
    const issuer = await h.createIssuer('Leaving While Sending');
    const { key } = await h.createKey(issuer);
    // A card whose workflow is open: the command waits WEBHOOK_TIMEOUT_MS + 5 s for its activities.
    const first = randomUUID();
    expect((await register(key, first)).status).toBe(201);

    let exited = false;
    const command = runCli(['issuer', 'erase', '--issuer', issuer, '--confirm', '--json'], cliEnv(), 120_000).finally(() => {
      exited = true;
    });
    // The issuer's backend goes on registering cards until the command has finished.
    const accepted: string[] = [];
    const answers = new Set<number>();
    while (!exited) {
      const id = randomUUID();
      const res = await register(key, id);
      answers.add(res.status);
      if (res.status === 201) accepted.push(id);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const result = await command;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ issuer_id: issuer, erased_dispatches: 1 + accepted.length });
    expect([...answers].every((status) => status === 201 || status === 401)).toBe(true);
    expect((await register(key)).status).toBe(401);

    const { rows } = await h.pool.query('SELECT count(*)::int AS n FROM dispatches WHERE issuer_id = $1', [issuer]);
    expect(rows[0].n).toBe(0);
    for (const id of [first, ...accepted]) {
      expect(Object.values(await dispatchFootprint(h.pool, id)).every((n) => n === 0)).toBe(true);
      expect(await countDispatchRuns(h.temporal, id)).toBe(0);
    }
  }, 150_000);

  it('leaves no dispatch registered with a key made while it ran (a dashboard user of the issuer makes one)', async () => {
    const issuer = await h.createIssuer('Leaving With A New Key');
    const { key } = await h.createKey(issuer);
    expect((await register(key)).status).toBe(201);

    let exited = false;
    const command = runCli(['issuer', 'erase', '--issuer', issuer, '--confirm', '--json'], cliEnv(), 120_000).finally(() => {
      exited = true;
    });
    await until(async () => (await register(key)).status === 401, 'the first key refused');
    // Settings → API keys of the dashboard: the same row the dashboard's form writes.
    const late = (await h.createKey(issuer)).key;
    const accepted: string[] = [];
    while (!exited) {
      const id = randomUUID();
      if ((await register(late, id)).status === 201) accepted.push(id);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await command).code).toBe(0);
    expect(accepted.length).toBeGreaterThan(0);
    const { rows } = await h.pool.query('SELECT count(*)::int AS n FROM dispatches WHERE issuer_id = $1', [issuer]);
    expect(rows[0].n).toBe(0);
  }, 150_000);
});
