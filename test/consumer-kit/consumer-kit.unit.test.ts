// The webhook consumer kit (consumer-kit/): verification in constant time with `X-Service-Signature` and
// the Standard Webhooks headers, parsing with the status record's own schema, dedupe by
// (data.id, event, timestamp), the latest-state rule, and diagnose's explanations.
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createConsumerApp } from '../../consumer-kit/example/koa-consumer.js';
import {
  createDeduper,
  createLatestStateStore,
  dedupeKey,
  diagnose,
  parse,
  shouldPromptActivation,
  verify,
  verifyRequest,
  verifyStandard,
  WebhookParseError,
  type CardWebhookEnvelope,
} from '../../consumer-kit/src/index.js';
import { generateSecret, signedHeaders, signHex } from '../../domain/signing.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import { buildEndpointDisabledBody, buildWebhookBody } from '../../domain/webhook-payload.js';

function record(overrides: Partial<StatusRecord> = {}): StatusRecord {
  return {
    id: randomUUID(),
    status: 'in_transit',
    dispatch_date: '2026-11-18T08:00:00.000Z',
    destination: { postal_code: '75011', country_code: 'FR' },
    prediction: { delivery_window: { min: '2026-11-20', max: '2026-11-22' }, confidence_level: 'High' },
    ui_suggestion: { locale: 'en-GB', recommended_message: 'Your card is on its way.', recommended_action: 'None' },
    ...overrides,
  };
}

function signedRequest(options: { secret?: string; previous?: string; switchAt?: Date; now?: Date } = {}) {
  const secret = options.secret ?? generateSecret();
  const body = buildWebhookBody({ type: 'status.updated', timestamp: '2026-11-20T10:00:00.000Z', data: record() });
  const headers = signedHeaders({
    eventId: 'evt_test',
    attempt: 1,
    body,
    secrets: { current: secret, previous: options.previous, switchAt: options.switchAt },
    now: options.now ?? new Date(),
  });
  return { secret, body, headers };
}

describe('verify', () => {
  it('accepts the X-Service-Signature of the raw body with the right secret', () => {
    const { secret, body, headers } = signedRequest();
    expect(verify(body, headers['X-Service-Signature'], secret)).toBe(true);
    expect(verify(Buffer.from(body), headers['X-Service-Signature'], secret)).toBe(true);
  });

  it('rejects a wrong secret, a changed body, a missing header and an uppercase signature', () => {
    const { secret, body, headers } = signedRequest();
    expect(verify(body, headers['X-Service-Signature'], generateSecret())).toBe(false);
    expect(verify(body.replace('in_transit', 'delivered'), headers['X-Service-Signature'], secret)).toBe(false);
    expect(verify(body, undefined, secret)).toBe(false);
    expect(verify(body, headers['X-Service-Signature'].toUpperCase(), secret)).toBe(false);
  });

  it('accepts any of several secrets (a rotation in progress)', () => {
    const { secret, body, headers } = signedRequest();
    expect(verify(body, headers['X-Service-Signature'], [generateSecret(), secret])).toBe(true);
  });
});

describe('verifyStandard', () => {
  it('accepts headers the standardwebhooks package signs', () => {
    const secret = generateSecret();
    const body = '{"hello":"world"}';
    const now = new Date();
    const signature = new Webhook(secret).sign('msg_1', now, body);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    };
    expect(verifyStandard(body, headers, secret)).toEqual({ ok: true });
  });

  it('rejects a timestamp outside the tolerance (a replay)', () => {
    const { secret, body, headers } = signedRequest({ now: new Date(Date.now() - 10 * 60_000) });
    expect(verifyStandard(body, headers, secret)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyStandard(body, headers, secret, { toleranceSeconds: 3600 })).toEqual({ ok: true });
  });

  it('accepts either signature during a rotation overlap', () => {
    const [previous, current] = [generateSecret(), generateSecret()];
    const { body, headers } = signedRequest({ secret: current, previous, switchAt: new Date(Date.now() + 60_000) });
    expect(verifyStandard(body, headers, previous)).toEqual({ ok: true });
    expect(verifyStandard(body, headers, current)).toEqual({ ok: true });
  });
});

describe('verifyRequest', () => {
  it('accepts a request whose both signatures verify, reading headers case-insensitively', () => {
    const { secret, body, headers } = signedRequest();
    const lowercased = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect(verifyRequest(body, lowercased, secret)).toEqual({ ok: true });
    expect(verifyRequest(body, new Headers(headers), secret)).toEqual({ ok: true });
  });

  it('rejects a request without X-Service-Signature', () => {
    const { secret, body, headers } = signedRequest();
    const { 'X-Service-Signature': _dropped, ...rest } = headers;
    expect(verifyRequest(body, rest, secret)).toEqual({ ok: false, reason: 'signature_missing' });
  });
});

describe('parse', () => {
  it('returns the typed envelope with the same status record schema as GET', () => {
    const data = record();
    const envelope = parse(buildWebhookBody({ type: 'delivery.predicted', timestamp: '2026-11-20T10:00:00.000Z', data }));
    expect(envelope).toEqual({ event: 'delivery.predicted', timestamp: '2026-11-20T10:00:00.000Z', data });
  });

  it('returns a webhook_endpoint.disabled event as the service builds it, with the endpoint as its data', () => {
    const data = {
      id: 'whe_1',
      url: 'https://hooks.example/cards',
      disabled_reason: 'failing' as const,
      disabled_at: '2026-11-20T09:00:00.000Z',
    };
    const body = buildEndpointDisabledBody('2026-11-20T10:00:00.000Z', data);
    const envelope = parse(body);
    expect(envelope).toEqual({ event: 'webhook_endpoint.disabled', timestamp: '2026-11-20T10:00:00.000Z', data });
    // Not a card's event: the latest-state store leaves it alone, and diagnose finds nothing wrong.
    expect(createLatestStateStore().apply(envelope)).toBe(false);
    const secret = generateSecret();
    const headers = signedHeaders({ eventId: 'evt_test', attempt: 1, body, secrets: { current: secret }, now: new Date() });
    expect(diagnose(body, headers, secret)).toMatchObject({ ok: true, problems: [] });
  });

  it('throws a WebhookParseError naming the bad field', () => {
    const body = JSON.stringify({ event: 'status.updated', timestamp: '2026-11-20T10:00:00Z', data: { ...record(), status: 'lost' } });
    expect(() => parse(body)).toThrow(WebhookParseError);
    expect(() => parse(body)).toThrow(/^data\.status:/);
    expect(() => parse('not json')).toThrow('body is not JSON');
  });

  it('prompts activation when delivered or when the action is Activate', () => {
    expect(shouldPromptActivation(record({ status: 'delivered' }))).toBe(true);
    expect(
      shouldPromptActivation(record({ ui_suggestion: { locale: 'en', recommended_message: 'x', recommended_action: 'Activate' } })),
    ).toBe(true);
    expect(shouldPromptActivation(record())).toBe(false);
  });
});

describe('dedupe', () => {
  const envelope = (overrides: Partial<CardWebhookEnvelope> = {}): CardWebhookEnvelope => ({
    event: 'status.updated',
    timestamp: '2026-11-20T10:00:00.000Z',
    data: record({ id: '0b6f3a52-8e3c-4b7a-9d7e-2f1c3b4a5d6e' }),
    ...overrides,
  });

  it('keys an event by (data.id, event, timestamp)', () => {
    expect(dedupeKey(envelope())).toBe('0b6f3a52-8e3c-4b7a-9d7e-2f1c3b4a5d6e|status.updated|2026-11-20T10:00:00.000Z');
  });

  it('reports the first copy as new and a redelivery as a duplicate', () => {
    const deduper = createDeduper();
    expect(deduper.firstSeen(envelope())).toBe(true);
    expect(deduper.firstSeen(envelope())).toBe(false);
    expect(deduper.firstSeen(envelope({ event: 'delivery.completed' }))).toBe(true);
    expect(deduper.firstSeen(envelope({ timestamp: '2026-11-20T10:00:01.000Z' }))).toBe(true);
  });

  it('forgets the oldest keys beyond maxEntries', () => {
    const deduper = createDeduper({ maxEntries: 2 });
    deduper.firstSeen(envelope({ timestamp: '2026-11-20T10:00:01.000Z' }));
    deduper.firstSeen(envelope({ timestamp: '2026-11-20T10:00:02.000Z' }));
    deduper.firstSeen(envelope({ timestamp: '2026-11-20T10:00:03.000Z' }));
    expect(deduper.size).toBe(2);
    expect(deduper.firstSeen(envelope({ timestamp: '2026-11-20T10:00:01.000Z' }))).toBe(true);
  });
});

describe('latest state', () => {
  it('never lets an older event overwrite a newer one, whatever the arrival order', () => {
    const id = randomUUID();
    const store = createLatestStateStore();
    const delivered: CardWebhookEnvelope = { event: 'status.updated', timestamp: '2026-11-21T09:00:00.000Z', data: record({ id, status: 'delivered' }) }; // prettier-ignore
    const inTransit: CardWebhookEnvelope = { event: 'status.updated', timestamp: '2026-11-20T09:00:00.000Z', data: record({ id, status: 'in_transit' }) }; // prettier-ignore
    expect(store.apply(delivered)).toBe(true);
    expect(store.apply(inTransit)).toBe(false);
    expect(store.get(id)?.record.status).toBe('delivered');
  });
});

describe('diagnose', () => {
  it('finds nothing wrong with a correctly verified request', () => {
    const { secret, body, headers } = signedRequest();
    expect(diagnose(body, headers, secret)).toMatchObject({ ok: true, problems: [] });
  });

  it('explains a missing header', () => {
    const { secret, body } = signedRequest();
    expect(diagnose(body, {}, secret).problems.map((p) => p.code)).toEqual(['header_missing']);
  });

  it('explains a re-serialised (pretty-printed) body', () => {
    const { secret, body, headers } = signedRequest();
    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    expect(diagnose(pretty, headers, secret).problems.map((p) => p.code)).toEqual(['body_reserialised']);
  });

  it('explains a parsed object passed instead of the raw body', () => {
    const { secret, body, headers } = signedRequest();
    expect(diagnose(JSON.parse(body), headers, secret).problems.map((p) => p.code)).toEqual(['body_not_raw']);
  });

  it('explains a wrong secret', () => {
    const { body, headers } = signedRequest();
    expect(diagnose(body, headers, generateSecret()).problems.map((p) => p.code)).toEqual(['wrong_secret']);
  });

  it('explains a signature compared in base64 or uppercase instead of lowercase hex', () => {
    const { secret, body, headers } = signedRequest();
    const digest = Buffer.from(signHex(body, secret), 'hex');
    expect(diagnose(body, headers, secret, { computed: digest.toString('base64') }).problems).toEqual([
      expect.objectContaining({ code: 'wrong_encoding', message: expect.stringMatching(/base64/) }),
    ]);
    const upper = { ...headers, 'X-Service-Signature': headers['X-Service-Signature'].toUpperCase() };
    expect(diagnose(body, upper, secret).problems).toEqual([
      expect.objectContaining({ code: 'wrong_encoding', message: expect.stringMatching(/uppercase/) }),
    ]);
  });

  it('explains a secret with a trailing newline or without its whsec_ prefix', () => {
    const { secret, body, headers } = signedRequest();
    expect(diagnose(body, headers, `${secret}\n`).problems.map((p) => p.code)).toContain('secret_whitespace');
    expect(diagnose(body, headers, secret.slice('whsec_'.length)).problems.map((p) => p.code)).toEqual(['secret_missing_prefix']);
  });

  it('explains that X-Service-Signature still uses the previous secret during a rotation', () => {
    const [previous, current] = [generateSecret(), generateSecret()];
    const { body, headers } = signedRequest({ secret: current, previous, switchAt: new Date(Date.now() + 60_000) });
    expect(diagnose(body, headers, current).problems.map((p) => p.code)).toEqual(['previous_secret']);
  });
});

describe('example Koa consumer', () => {
  async function post(app: ReturnType<typeof createConsumerApp>, body: string, headers: Record<string, string>) {
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', body, headers });
      return res.status;
    } finally {
      server.close();
    }
  }

  it('answers 200 to a verified event and prompts activation when the card is delivered', async () => {
    const secret = generateSecret();
    const activated: string[] = [];
    const app = createConsumerApp({ secrets: [secret], onActivate: (e) => activated.push(e.data.id) });
    const data = record({ status: 'delivered' });
    const body = buildWebhookBody({ type: 'delivery.completed', timestamp: new Date().toISOString(), data });
    const headers = signedHeaders({ eventId: 'evt_koa', attempt: 1, body, secrets: { current: secret }, now: new Date() });
    expect(await post(app, body, headers)).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(activated).toEqual([data.id]);
  });

  it('answers 401 to a request signed with another secret', async () => {
    const warn = console.warn;
    console.warn = () => {};
    try {
      const { body, headers } = signedRequest();
      expect(await post(createConsumerApp({ secrets: [generateSecret()] }), body, headers)).toBe(401);
    } finally {
      console.warn = warn;
    }
  });
});
