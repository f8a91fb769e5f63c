// The webhook and delivery commands of the operator CLI as an operator runs them: a real
// `tsx cli/admin.ts` subprocess against the migrated test Postgres. Checks the --json contracts of
// docs/admin-cli.md "Operator CLI" (`webhook add` → { id, secret, url, events }, lists → { data }), that secrets are
// printed once and never listed, the SSRF refusal at `add`, `add --test` endpoints, rotation, and
// disabling and enabling an endpoint (`enable --replay-missed` through a real worker and receiver), and
// that a replay fails at once when no worker polls the task queue it would start on.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeRuntimeFile } from '../../cli/runtime-file.js';
import { createIssuer } from '../../db/issuers.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { createReplay, getReplay } from '../../db/webhook-replays.js';
import { recordDeliveryAttempt } from '../../db/webhooks.js';
import { createWebhookEvents } from '../support/webhook-events.js';
import { expectOneLineFailure, runCli as runCliProcess } from '../support/cli.js';
import { requireTestEnv } from '../support/env.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';

let databaseUrl: string;
let pool: Pool;

beforeAll(() => {
  databaseUrl = requireTestEnv('TEST_DATABASE_URL');
  pool = createPool(databaseUrl, { max: 2, applicationName: 'test-webhook-cli' });
});

afterAll(async () => {
  await pool?.end();
});

function runCli(args: string[], env: Record<string, string> = {}) {
  return runCliProcess(args, { DATABASE_URL: databaseUrl, ...env });
}

const PUBLIC_URL = 'https://93.184.215.14/hooks/cards';

async function addWebhook(issuerId: string, url = PUBLIC_URL, events = 'status.updated,delivery.completed') {
  const result = await runCli(['webhook', 'add', '--issuer', issuerId, '--url', url, '--events', events, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as { id: string; secret: string; url: string; events: string[] };
}

describe('webhook add', () => {
  it('prints exactly { id, secret, url, events } with a whe_ id and a whsec_ secret', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Webhooks')).id;
    const body = await addWebhook(issuerId);
    expect(Object.keys(body).sort()).toEqual(['events', 'id', 'secret', 'url']);
    expect(body.id).toMatch(/^whe_[0-9A-Za-z]{16}$/);
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(body).toMatchObject({ url: PUBLIC_URL, events: ['status.updated', 'delivery.completed'] });
  });

  it('refuses a loopback URL with a one-line reason naming the range', async () => {
    const issuerId = (await createIssuer(pool, 'CLI SSRF')).id;
    expectOneLineFailure(
      await runCli(['webhook', 'add', '--issuer', issuerId, '--url', 'http://127.0.0.1:9/hook', '--events', 'status.updated']),
      /^error: invalid --url: 127\.0\.0\.1 is in a loopback range/,
    );
  });

  it('accepts a loopback URL when WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Dev')).id;
    const result = await runCli(
      ['webhook', 'add', '--issuer', issuerId, '--url', 'http://127.0.0.1:9/hook', '--events', 'status.updated', '--json'],
      { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    );
    expect(result.code).toBe(0);
  });

  it('refuses an unknown event type, naming the known ones', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Events')).id;
    expectOneLineFailure(
      await runCli(['webhook', 'add', '--issuer', issuerId, '--url', PUBLIC_URL, '--events', 'status.updated,card.lost']),
      /^error: invalid --events: unknown event "card\.lost" \(known: status\.updated, delivery\.predicted/,
    );
  });

  it('refuses an unknown issuer', async () => {
    expectOneLineFailure(
      await runCli(['webhook', 'add', '--issuer', 'iss_doesNotExist00', '--url', PUBLIC_URL, '--events', 'status.updated']),
      /^error: unknown issuer: iss_doesNotExist00$/,
    );
  });

  it('refuses a 21st endpoint for one issuer', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Limit')).id;
    await pool.query(
      `INSERT INTO webhook_endpoints (id, issuer_id, url, events, secret)
       SELECT 'whe_limit_' || $1 || '_' || n, $1, $2, '{status.updated}', 'whsec_x' FROM generate_series(1, 20) n`,
      [issuerId, PUBLIC_URL],
    );
    expectOneLineFailure(
      await runCli(['webhook', 'add', '--issuer', issuerId, '--url', PUBLIC_URL, '--events', 'status.updated']),
      /already has 20 webhook endpoints/,
    );
  });
});

describe('webhook add --test', () => {
  it("makes a test-mode endpoint, and webhook list shows each endpoint's mode", async () => {
    const issuerId = (await createIssuer(pool, 'CLI Test Mode')).id;
    const live = await addWebhook(issuerId);
    const result = await runCli([
      'webhook',
      'add',
      '--issuer',
      issuerId,
      '--url',
      PUBLIC_URL,
      '--events',
      'status.updated',
      '--test',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const test = JSON.parse(result.stdout);
    const { data } = JSON.parse((await runCli(['webhook', 'list', '--issuer', issuerId, '--json'])).stdout);
    expect(data.map((e: { id: string; mode: string }) => [e.id, e.mode])).toEqual([
      [live.id, 'live'],
      [test.id, 'test'],
    ]);
    expect((await runCli(['webhook', 'list', '--issuer', issuerId])).stdout).toMatch(new RegExp(`${test.id}\\s+${issuerId}\\s+test\\s`));
  });
});

describe('webhook list and remove', () => {
  it('lists the endpoints of an issuer without their secrets', async () => {
    const issuerId = (await createIssuer(pool, 'CLI List')).id;
    const added = await addWebhook(issuerId);
    const result = await runCli(['webhook', 'list', '--issuer', issuerId, '--json']);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(added.secret);
    expect(result.stdout).not.toMatch(/whsec_/);
    const { data } = JSON.parse(result.stdout);
    expect(data).toEqual([
      expect.objectContaining({
        id: added.id,
        issuer_id: issuerId,
        url: PUBLIC_URL,
        events: added.events,
        previous_secret_expires_at: null,
      }),
    ]);
  });

  it('remove takes the endpoint out of the list and stops new deliveries to it', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Remove')).id;
    const added = await addWebhook(issuerId);
    const removed = await runCli(['webhook', 'remove', '--id', added.id, '--json']);
    expect(removed.code).toBe(0);
    expect(Object.keys(JSON.parse(removed.stdout)).sort()).toEqual(['id', 'removed_at']);
    expect(JSON.parse((await runCli(['webhook', 'list', '--issuer', issuerId, '--json'])).stdout).data).toEqual([]);
    const data = sampleRecord();
    const pairs = await createWebhookEvents(pool, { dispatchId: data.id, issuerId, mode: 'live', events: [{ type: 'status.updated', timestamp: new Date().toISOString(), data }] }); // prettier-ignore
    expect(pairs).toEqual([]);
  });

  it('remove refuses an unknown id', async () => {
    expectOneLineFailure(
      await runCli(['webhook', 'remove', '--id', 'whe_doesNotExist00']),
      /^error: unknown webhook endpoint: whe_doesNotExist00$/,
    );
  });
});

describe('list filters naming an unknown id', () => {
  it('webhook list --issuer refuses an unknown issuer with a one-line reason rather than an empty list', async () => {
    expectOneLineFailure(
      await runCli(['webhook', 'list', '--issuer', 'iss_doesNotExist0000', '--json']),
      /^error: unknown issuer: iss_doesNotExist0000$/,
    );
  });

  it('deliveries list --endpoint refuses an unknown endpoint with a one-line reason rather than an empty list', async () => {
    expectOneLineFailure(
      await runCli(['deliveries', 'list', '--endpoint', 'whe_doesNotExist00', '--json']),
      /^error: unknown webhook endpoint: whe_doesNotExist00$/,
    );
  });

  it('deliveries list --endpoint still lists the deliveries of a removed endpoint', async () => {
    const issuerId = (await createIssuer(pool, 'Removed Endpoint Bank')).id;
    const endpoint = await addWebhook(issuerId);
    const data = sampleRecord();
    await createWebhookEvents(pool, { dispatchId: data.id, issuerId, mode: 'live', events: [{ type: 'status.updated', timestamp: new Date().toISOString(), data }] }); // prettier-ignore
    expect((await runCli(['webhook', 'remove', '--id', endpoint.id])).code).toBe(0);
    const result = await runCli(['deliveries', 'list', '--endpoint', endpoint.id, '--json']);
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { data: Array<{ endpoint_id: string }> }).data).toEqual([
      expect.objectContaining({ endpoint_id: endpoint.id, event: 'status.updated' }),
    ]);
  });
});

describe('deliveries replay naming an unknown id', () => {
  // As an operator runs it: with the service's Temporal named, so only the unknown id can refuse it.
  const withTemporal = () => ({ TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS') });
  const range = ['--since', new Date(Date.now() - 3_600_000).toISOString(), '--until', new Date().toISOString()];

  it('--endpoint refuses an unknown endpoint with a one-line reason naming it, also with --json', async () => {
    for (const json of [[], ['--json']]) {
      expectOneLineFailure(
        await runCli(['deliveries', 'replay', '--endpoint', 'whe_doesNotExist00', ...range, ...json], withTemporal()),
        /^error: unknown webhook endpoint: whe_doesNotExist00$/,
      );
    }
  });

  it('--event-id refuses an unknown event with a one-line reason naming it, also with --json', async () => {
    for (const json of [[], ['--json']]) {
      expectOneLineFailure(
        await runCli(['deliveries', 'replay', '--event-id', 'evt_doesNotExist00', ...json], withTemporal()),
        /^error: unknown webhook event: evt_doesNotExist00$/,
      );
    }
  });

  it('records no replay for either', async () => {
    const { rows } = await pool.query(
      `SELECT 1 FROM webhook_replays WHERE endpoint_id = 'whe_doesNotExist00' OR event_id = 'evt_doesNotExist00'`,
    );
    expect(rows).toEqual([]);
  });
});

describe('deliveries replay-status', () => {
  const PROGRESS = [
    'completed_at',
    'created_at',
    'delivered',
    'endpoint_id',
    'event_id',
    'failed',
    'id',
    'sent',
    'skipped',
    'status',
    'total',
  ];

  it("prints a range replay's progress with exactly the fields docs/admin-cli.md names, event_id null", async () => {
    const endpoint = await addWebhook((await createIssuer(pool, 'Replay Status Bank')).id);
    const id = `replay-${randomUUID()}`;
    await createReplay(pool, {
      id,
      filter: { endpointId: endpoint.id, since: new Date(Date.now() - 3_600_000), until: new Date() },
      total: 3,
    });
    const result = await runCli(['deliveries', 'replay-status', '--id', id, '--json']);
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(PROGRESS);
    expect(body).toMatchObject({ id, endpoint_id: endpoint.id, event_id: null, status: 'running', total: 3, sent: 0, completed_at: null });
  });

  it("prints one event's replay with the same fields, endpoint_id null", async () => {
    const id = `replay-${randomUUID()}`;
    await createReplay(pool, { id, filter: { eventId: 'evt_status_fields' }, total: 1 });
    const body = JSON.parse((await runCli(['deliveries', 'replay-status', '--id', id, '--json'])).stdout) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(PROGRESS);
    expect(body).toMatchObject({ id, endpoint_id: null, event_id: 'evt_status_fields' });
  });

  it('refuses an unknown replay id with a one-line reason', async () => {
    expectOneLineFailure(
      await runCli(['deliveries', 'replay-status', '--id', 'replay-unknown', '--json']),
      /^error: unknown replay: replay-unknown$/,
    );
  });
});

describe('webhook rotate-secret', () => {
  it('refuses an --overlap over 30 days, as the API does, and leaves the secret as it was', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Rotate Long')).id;
    const added = await addWebhook(issuerId);
    expectOneLineFailure(
      await runCli(['webhook', 'rotate-secret', '--id', added.id, '--overlap', '31d', '--json']),
      /^error: invalid --overlap: must not exceed 30 days/,
    );
    const { rows } = await pool.query('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1', [added.id]);
    expect(rows[0]).toEqual({ secret: added.secret, previous_secret: null });
    const thirty = await runCli(['webhook', 'rotate-secret', '--id', added.id, '--overlap', '30d', '--json']);
    expect(thirty.code).toBe(0);
  });

  it('prints a new secret and keeps the old one for the overlap, switching X-Service-Signature at --switch-at', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Rotate')).id;
    const added = await addWebhook(issuerId);
    const switchAt = new Date(Date.now() + 3_600_000).toISOString();
    const result = await runCli(['webhook', 'rotate-secret', '--id', added.id, '--overlap', '2h', '--switch-at', switchAt, '--json']);
    expect(result.stderr).toBe('');
    const body = JSON.parse(result.stdout);
    expect(Object.keys(body).sort()).toEqual(['id', 'previous_secret_expires_at', 'secret', 'signature_switch_at']);
    expect(body.secret).toMatch(/^whsec_/);
    expect(body.secret).not.toBe(added.secret);
    expect(body.signature_switch_at).toBe(switchAt);
    const { rows } = await pool.query('SELECT secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id = $1', [added.id]); // prettier-ignore
    expect(rows[0]).toMatchObject({ secret: body.secret, previous_secret: added.secret });
    const overlapMs = (rows[0].previous_secret_expires_at as Date).getTime() - Date.now();
    expect(overlapMs).toBeGreaterThan(7_000_000);
    expect(overlapMs).toBeLessThanOrEqual(7_200_000);
  });

  it('switches X-Service-Signature at the end of the overlap by default', async () => {
    const added = await addWebhook((await createIssuer(pool, 'CLI Rotate Default')).id);
    const body = JSON.parse((await runCli(['webhook', 'rotate-secret', '--id', added.id, '--json'])).stdout);
    expect(body.signature_switch_at).toBe(body.previous_secret_expires_at);
    expect(Date.parse(body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
  });

  it('refuses a --switch-at after the end of the overlap', async () => {
    const added = await addWebhook((await createIssuer(pool, 'CLI Rotate Late')).id);
    const late = new Date(Date.now() + 3 * 3_600_000).toISOString();
    expectOneLineFailure(
      await runCli(['webhook', 'rotate-secret', '--id', added.id, '--overlap', '1h', '--switch-at', late]),
      /^error: invalid --switch-at: must not be later than the end of the overlap/,
    );
  });
});

/** An issuer's endpoint and two webhook events of one dispatch (status.updated, delivery.completed), each with its delivery to it. */
async function endpointWithTwoEvents(issuerName: string) {
  const issuerId = (await createIssuer(pool, issuerName)).id;
  const hook = await addWebhook(issuerId);
  const data = sampleRecord();
  const events = await createWebhookEvents(pool, {
    dispatchId: data.id,
    issuerId,
    mode: 'live',
    events: [
      { type: 'status.updated', timestamp: '2026-11-20T10:00:00.000Z', data },
      { type: 'delivery.completed', timestamp: '2026-11-20T10:00:00.000Z', data },
    ],
  });
  return { hook, events };
}

describe('deliveries list', () => {
  it('lists { event_id, endpoint_id, event, state, attempts, last_attempt_at }, filtered by --undeliverable and --endpoint', async () => {
    const { hook, events } = await endpointWithTwoEvents('CLI Deliveries');
    const [delivered, failed] = events;
    const at = new Date('2026-11-20T10:00:01.000Z');
    await recordDeliveryAttempt(pool, { ...delivered, attempt: 1, startedAt: at, durationMs: 12, statusCode: 200, state: 'delivered' });
    await recordDeliveryAttempt(pool, { ...failed, attempt: 6, startedAt: at, durationMs: 5000, error: 'timeout', state: 'undeliverable' });

    const all = JSON.parse((await runCli(['deliveries', 'list', '--endpoint', hook.id, '--json'])).stdout).data;
    expect(all).toHaveLength(2);
    expect(all).toContainEqual({ event_id: delivered.eventId, endpoint_id: hook.id, event: 'status.updated', state: 'delivered', attempts: 1, last_attempt_at: at.toISOString() }); // prettier-ignore

    const result = await runCli(['deliveries', 'list', '--undeliverable', '--endpoint', hook.id, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).data).toEqual([
      { event_id: failed.eventId, endpoint_id: hook.id, event: 'delivery.completed', state: 'undeliverable', attempts: 1, last_attempt_at: at.toISOString() }, // prettier-ignore
    ]);
  });
});

describe('deliveries list --limit', () => {
  it('says on stderr, stdout still one JSON document, when more deliveries match than it lists', async () => {
    const { hook } = await endpointWithTwoEvents('CLI Deliveries Limit');
    const cut = await runCli(['deliveries', 'list', '--endpoint', hook.id, '--limit', '1', '--json']);
    expect(cut.code).toBe(0);
    expect(JSON.parse(cut.stdout).data).toHaveLength(1);
    expect(cut.stderr).toMatch(/^note: the newest 1 deliveries listed; more match \(--limit up to 1000\)$/m);
    const whole = await runCli(['deliveries', 'list', '--endpoint', hook.id, '--limit', '2', '--json']);
    expect(JSON.parse(whole.stdout).data).toHaveLength(2);
    expect(whole.stderr).toBe('');
  });
});

/** Puts an endpoint in the state auto-disable leaves it in: paused as `failing`, failing since `failingSince`. */
async function markAutoDisabled(endpointId: string, failingSince: Date, pausedAt: Date): Promise<void> {
  await pool.query(`UPDATE webhook_endpoints SET failing_since = $2, paused_at = $3, paused_reason = 'failing' WHERE id = $1`, [
    endpointId,
    failingSince,
    pausedAt,
  ]);
}

/** Events for the issuer's live endpoints, created now (a paused endpoint gets them already skipped). */
async function emitEvents(issuerId: string, count: number): Promise<void> {
  const data = sampleRecord();
  const events = Array.from({ length: count }, () => ({ type: 'status.updated' as const, timestamp: new Date().toISOString(), data }));
  await createWebhookEvents(pool, { dispatchId: data.id, issuerId, mode: 'live', events });
}

async function listed(issuerId: string) {
  const result = await runCli(['webhook', 'list', '--issuer', issuerId, '--json']);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout).data as Array<Record<string, unknown>>;
}

describe('webhook list: disabled endpoints', () => {
  it('keeps every earlier field and adds disabled, disabled_reason, disabled_at and failing_since', async () => {
    const issuerId = (await createIssuer(pool, 'CLI List Fields')).id;
    const added = await addWebhook(issuerId);
    const [entry] = await listed(issuerId);
    expect(Object.keys(entry).sort()).toEqual([
      'created_at',
      'disabled',
      'disabled_at',
      'disabled_reason',
      'events',
      'failing_since',
      'id',
      'issuer_id',
      'mode',
      'previous_secret_expires_at',
      'signature_switch_at',
      'url',
    ]);
    expect(entry).toMatchObject({ id: added.id, disabled: false, disabled_reason: null, disabled_at: null, failing_since: null });
  });

  it('shows an auto-disabled endpoint as failing, since when it was disabled and since its first failure', async () => {
    const issuerId = (await createIssuer(pool, 'CLI List Failing')).id;
    const added = await addWebhook(issuerId);
    const failingSince = new Date('2026-11-10T08:00:00.000Z');
    const pausedAt = new Date('2026-11-15T08:00:05.000Z');
    await markAutoDisabled(added.id, failingSince, pausedAt);
    expect(await listed(issuerId)).toEqual([
      expect.objectContaining({
        id: added.id,
        disabled: true,
        disabled_reason: 'failing',
        disabled_at: pausedAt.toISOString(),
        failing_since: failingSince.toISOString(),
      }),
    ]);
    const text = await runCli(['webhook', 'list', '--issuer', issuerId]);
    expect(text.stdout).toMatch(/DISABLED/);
    expect(text.stdout).toMatch(new RegExp(`${added.id}\\s.*failing since ${pausedAt.toISOString()}`));
  });
});

describe('webhook disable', () => {
  it('pauses the endpoint by hand: { id, disabled: true, disabled_reason: "manual", disabled_at }, shown by webhook list', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Disable')).id;
    const added = await addWebhook(issuerId);
    const result = await runCli(['webhook', 'disable', '--id', added.id, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body).toEqual({ id: added.id, disabled: true, disabled_reason: 'manual', disabled_at: expect.any(String) });
    expect(Math.abs(Date.parse(body.disabled_at) - Date.now())).toBeLessThan(60_000);
    expect(await listed(issuerId)).toEqual([
      expect.objectContaining({ id: added.id, disabled: true, disabled_reason: 'manual', disabled_at: body.disabled_at }),
    ]);
    const text = await runCli(['webhook', 'list', '--issuer', issuerId]);
    expect(text.stdout).toMatch(new RegExp(`${added.id}\\s.*manual since ${body.disabled_at}`));
  });

  it('gives a disabled endpoint its new events already skipped', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Disable Skips')).id;
    const added = await addWebhook(issuerId);
    expect((await runCli(['webhook', 'disable', '--id', added.id])).code).toBe(0);
    await emitEvents(issuerId, 1);
    const { rows } = await pool.query('SELECT state FROM webhook_deliveries WHERE endpoint_id = $1', [added.id]);
    expect(rows).toEqual([{ state: 'skipped' }]);
  });

  it('keeps the reason and time of an endpoint already disabled (auto-disabled stays failing)', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Disable Again')).id;
    const added = await addWebhook(issuerId);
    const pausedAt = new Date('2026-11-15T08:00:05.000Z');
    await markAutoDisabled(added.id, new Date('2026-11-10T08:00:00.000Z'), pausedAt);
    const result = await runCli(['webhook', 'disable', '--id', added.id, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id: added.id, disabled: true, disabled_reason: 'failing', disabled_at: pausedAt.toISOString() }); // prettier-ignore
  });

  it('refuses an unknown or removed id with a one-line reason and nothing on stdout, also with --json', async () => {
    expectOneLineFailure(await runCli(['webhook', 'disable', '--id', 'whe_doesNotExist00', '--json']), /^error: unknown webhook endpoint: whe_doesNotExist00$/); // prettier-ignore
    const added = await addWebhook((await createIssuer(pool, 'CLI Disable Removed')).id);
    expect((await runCli(['webhook', 'remove', '--id', added.id])).code).toBe(0);
    expectOneLineFailure(
      await runCli(['webhook', 'disable', '--id', added.id]),
      new RegExp(`^error: unknown webhook endpoint: ${added.id}$`),
    );
  });
});

describe('webhook enable', () => {
  it('re-enables an auto-disabled endpoint and reports what it missed since its first failure, as PATCH disabled: false', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Enable')).id;
    const added = await addWebhook(issuerId);
    const failingSince = new Date(Date.now() - 5 * 86_400_000);
    await markAutoDisabled(added.id, failingSince, new Date(Date.now() - 3_600_000));
    await emitEvents(issuerId, 3);
    const before = Date.now();
    const result = await runCli(['webhook', 'enable', '--id', added.id, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body).toEqual({
      id: added.id,
      disabled: false,
      disabled_reason: null,
      disabled_at: null,
      missed: { since: failingSince.toISOString(), until: expect.any(String), count: 3 },
      replay: null,
    });
    expect(Date.parse(body.missed.until)).toBeGreaterThanOrEqual(before - 1000);
    // Enabling clears failing_since: the auto-disable period starts again from the next failure.
    expect(await listed(issuerId)).toEqual([
      expect.objectContaining({ id: added.id, disabled: false, disabled_reason: null, disabled_at: null, failing_since: null }),
    ]);
    // The human output offers the replay of that range.
    await markAutoDisabled(added.id, failingSince, new Date());
    const text = await runCli(['webhook', 'enable', '--id', added.id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/3 deliveries missed/);
    expect(text.stdout).toContain(
      `npm run admin -- deliveries replay --endpoint ${added.id} --since ${failingSince.toISOString()} --until `,
    );
  });

  it('reports missed since the pause for an endpoint disabled by hand', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Enable Manual')).id;
    const added = await addWebhook(issuerId);
    const disabled = JSON.parse((await runCli(['webhook', 'disable', '--id', added.id, '--json'])).stdout);
    await emitEvents(issuerId, 2);
    const body = JSON.parse((await runCli(['webhook', 'enable', '--id', added.id, '--json'])).stdout);
    expect(body.missed).toEqual({ since: disabled.disabled_at, until: expect.any(String), count: 2 });
  });

  it('reports missed: null for an endpoint that was not disabled, and changes nothing', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Enable Enabled')).id;
    const added = await addWebhook(issuerId);
    const result = await runCli(['webhook', 'enable', '--id', added.id, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id: added.id, disabled: false, disabled_reason: null, disabled_at: null, missed: null, replay: null }); // prettier-ignore
  });

  it('refuses an unknown id with a one-line reason and nothing on stdout, also with --json and --replay-missed', async () => {
    expectOneLineFailure(
      await runCli(['webhook', 'enable', '--id', 'whe_doesNotExist00', '--replay-missed', '--json'], { TEMPORAL_ADDRESS: '127.0.0.1:9' }),
      /^error: unknown webhook endpoint: whe_doesNotExist00$/,
    );
  });
});

describe('with no worker on the task queue it names', () => {
  // The service's Temporal, but a queue nobody polls (the worker down, or another TEMPORAL_TASK_QUEUE).
  const idle = `no-worker-${randomUUID()}`;
  const noWorker = () => ({ TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'), TEMPORAL_TASK_QUEUE: idle });
  const refusal = new RegExp(`^error: no worker polls the task queue "${idle}" \\(namespace default\\)`);

  it('deliveries replay --wait fails at once, naming the queue (also the one of a running `npm start`), and starts no replay', async () => {
    const { hook, events } = await endpointWithTwoEvents('CLI Replay No Worker');
    const started = Date.now();
    expectOneLineFailure(await runCli(['deliveries', 'replay', '--event-id', events[0].eventId, '--wait', '--json'], noWorker()), refusal);
    // Without TEMPORAL_ADDRESS: the Temporal, namespace and queue of the running `npm start`'s runtime file.
    const dir = mkdtempSync(path.join(tmpdir(), 'cds-webhook-cli-'));
    try {
      const file = path.join(dir, 'runtime.json');
      writeRuntimeFile({ databaseUrl, apiUrl: 'http://127.0.0.1:3000', temporalAddress: noWorker().TEMPORAL_ADDRESS, temporalNamespace: 'default', temporalTaskQueue: idle, pid: process.pid }, file); // prettier-ignore
      const range = ['--since', '2026-11-20T00:00:00Z', '--until', '2026-11-21T00:00:00Z'];
      expectOneLineFailure(await runCli(['deliveries', 'replay', '--endpoint', hook.id, ...range, '--wait'], { CDS_RUNTIME_FILE: file }), refusal); // prettier-ignore
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await pool.query('SELECT 1 FROM webhook_replays WHERE endpoint_id = $1 OR event_id = $2', [hook.id, events[0].eventId])).rows).toEqual([]); // prettier-ignore
  }, 40_000);

  it('webhook enable --replay-missed fails at once, naming the queue, and leaves the endpoint disabled', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Enable No Worker')).id;
    const added = await createWebhookEndpoint(pool, { issuerId, url: PUBLIC_URL, events: ['status.updated'] });
    if (!added.ok) throw new Error(added.reason);
    const id = added.endpoint.id;
    await markAutoDisabled(id, new Date(Date.now() - 86_400_000), new Date(Date.now() - 60_000));
    await emitEvents(issuerId, 1);
    expectOneLineFailure(await runCli(['webhook', 'enable', '--id', id, '--replay-missed', '--json'], noWorker()), refusal);
    const { rows } = await pool.query('SELECT paused_reason, failing_since FROM webhook_endpoints WHERE id = $1', [id]);
    expect(rows).toEqual([{ paused_reason: 'failing', failing_since: expect.any(Date) }]);
  }, 40_000);
});

describe('webhook enable --replay-missed', () => {
  let h: Harness;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    receiver = await startReceiver();
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
    await h?.stop();
  });

  it('re-enables the endpoint and sends it every delivery it missed, through a paged replay', async () => {
    const issuerId = (await createIssuer(pool, 'CLI Enable Replay')).id;
    const added = await runCli(['webhook', 'add', '--issuer', issuerId, '--url', receiver.url, '--events', 'status.updated', '--json'], {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const endpointId = JSON.parse(added.stdout).id as string;
    await markAutoDisabled(endpointId, new Date(Date.now() - 86_400_000), new Date(Date.now() - 60_000));
    await emitEvents(issuerId, 2);
    const { rows } = await pool.query<{ event_id: string }>(`SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'skipped'`, [endpointId]); // prettier-ignore
    expect(rows).toHaveLength(2);

    const result = await runCli(['webhook', 'enable', '--id', endpointId, '--replay-missed', '--json'], {
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body).toMatchObject({ id: endpointId, disabled: false, missed: { count: 2 }, replay: { id: expect.stringMatching(/^replay-/), total: 2 } }); // prettier-ignore

    const received = await until(
      () => (receiver.requests.length >= 2 ? receiver.requests.map((r) => String(r.headers['x-service-event-id'])) : undefined),
      'the missed deliveries',
    );
    expect(received.sort()).toEqual(rows.map((r) => r.event_id).sort());
    const replay = await until(async () => {
      const progress = await getReplay(pool, body.replay.id);
      return progress?.status === 'completed' ? progress : undefined;
    }, 'the replay to complete');
    expect(replay).toMatchObject({ endpointId, total: 2, delivered: 2 });
  });
});

function sampleRecord(): StatusRecord {
  return {
    id: randomUUID(),
    status: 'in_transit',
    dispatch_date: '2026-11-18T08:00:00.000Z',
    destination: { postal_code: '10115', country_code: 'DE' },
    prediction: { delivery_window: { min: '2026-11-20', max: '2026-11-22' }, confidence_level: 'Medium' },
    ui_suggestion: { locale: 'en-GB', recommended_message: 'Your card is on its way.', recommended_action: 'None' },
  };
}
