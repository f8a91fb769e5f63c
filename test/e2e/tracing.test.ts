// Traces (docs/monitoring.md "Traces"): the real API and worker processes (`tsx api/main.ts`,
// `tsx worker/main.ts`) with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP receiver
// (a plain HTTP server taking the exporter's JSON on POST /v1/traces). One carrier event posted to
// the API makes one trace: the API's request span, the client's signal, the workflow's signal
// handling, the projection and the webhook delivery activities, with the same trace id in the
// webhook's `traceparent` and in log lines of both processes. A worker started without that
// variable sends no `traceparent` and exports nothing.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { freePort } from '../../devtools/postgres.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { randomId, requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint, type Started } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
}

/** A local OTLP/HTTP receiver: every span of every JSON export it is sent, with its resource's service name. */
async function startCollector(): Promise<{ url: string; spans: ExportedSpan[]; paths: string[]; close(): Promise<void> }> {
  const spans: ExportedSpan[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url}`);
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const resourceSpans of body.resourceSpans ?? []) {
          const attributes: Array<{ key: string; value: { stringValue?: string } }> = resourceSpans.resource?.attributes ?? [];
          const service = attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const scope of resourceSpans.scopeSpans ?? []) for (const span of scope.spans ?? []) spans.push({ ...span, service });
        }
      }
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let h: Harness;
let collector: Awaited<ReturnType<typeof startCollector>>;
let receiver: Receiver;
let api: Started;
let apiUrl: string;
let tracedWorker: Started;
let untracedWorker: Started;
let tracedKey: string;
let untracedKey: string;
let untracedApiUrl: string;
const tracedQueue = randomId('tracing-on');
const untracedQueue = randomId('tracing-off');

const requestsFor = (id: string) => receiver.requests.filter((r) => JSON.parse(r.body.toString('utf8')).data.id === id);
const logLines = (started: Started) =>
  started
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

async function issuerWithEndpoint(name: string): Promise<string> {
  const issuerId = await h.createIssuer(name);
  const created = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated'] });
  if (!created.ok) throw new Error(created.reason);
  return (await h.createKey(issuerId)).key;
}

/** Registers a dispatch and posts one carrier event for it (which fires a status.updated webhook). */
async function registerAndPostEvent(baseUrl: string, key: string): Promise<string> {
  const id = randomUUID();
  const registered = await request(baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) });
  expect(registered.status).toBe(201);
  const sent = await request(baseUrl, `/v1/dispatches/${id}/events`, {
    method: 'POST',
    headers: bearer(key),
    body: { status: 'in_transit', occurred_at: new Date().toISOString() },
  });
  expect(sent.status).toBe(202);
  return id;
}

const workerEnv = (taskQueue: string): Record<string, string> => ({
  DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
  TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
  TEMPORAL_TASK_QUEUE: taskQueue,
  HOST: '127.0.0.1',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  LOG_LEVEL: 'info',
});

beforeAll(async () => {
  h = await startHarness();
  collector = await startCollector();
  receiver = await startReceiver();
  tracedKey = await issuerWithEndpoint('Traced Issuer');
  untracedKey = await issuerWithEndpoint('Untraced Issuer');
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '200' };
  const port = await freePort();
  [api, tracedWorker, untracedWorker] = await Promise.all([
    startEntryPoint('api/main.ts', { ...workerEnv(tracedQueue), PORT: String(port), ...otel }, 'API listening'),
    startEntryPoint('worker/main.ts', { ...workerEnv(tracedQueue), ...otel }, 'worker started'),
    // Without OTEL_EXPORTER_OTLP_ENDPOINT nothing starts, even with the SDK's other variables set
    // (were the SDK loaded, this one would send it spans).
    startEntryPoint(
      'worker/main.ts',
      {
        ...workerEnv(untracedQueue),
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`,
        OTEL_SERVICE_NAME: 'untraced-worker',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
      'worker started',
    ),
  ]);
  apiUrl = `http://127.0.0.1:${port}`;
  // The in-process API (this test process never starts tracing) on the untraced worker's queue.
  untracedApiUrl = (await h.startExtraApi({ TEMPORAL_TASK_QUEUE: untracedQueue })).baseUrl;
}, 240_000);

afterAll(async () => {
  for (const started of [api, tracedWorker, untracedWorker]) {
    if (started && started.child.exitCode === null && started.child.signalCode === null) {
      started.child.kill('SIGTERM');
      await started.exited;
    }
  }
  await receiver?.close();
  await collector?.close();
  await h?.stop();
});

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('one trace runs from POST /v1/dispatches/{id}/events through the signal, the workflow, the projection and the webhook attempt, whose traceparent and log lines carry its id', async () => {
    const id = await registerAndPostEvent(apiUrl, tracedKey);
    const [webhook] = await until(() => (requestsFor(id).length > 0 ? requestsFor(id) : undefined), 'the webhook');

    const eventsSpan = await until(
      () => collector.spans.find((span) => span.name === 'POST /v1/dispatches/:id/events' && span.service === 'card-delivery-api'),
      'the API request span',
    );
    const traceId = eventsSpan.traceId;
    const expected = [
      ['POST /v1/dispatches/:id/events', 'card-delivery-api'],
      ['SignalWorkflow:carrierEvent', 'card-delivery-api'],
      ['HandleSignal:carrierEvent', 'card-delivery-worker'],
      ['RunActivity:projectChange', 'card-delivery-worker'],
      ['RunActivity:deliverWebhooks', 'card-delivery-worker'],
    ];
    const inTrace = () => collector.spans.filter((span) => span.traceId === traceId).map((span) => [span.name, span.service]);
    await until(
      () => expected.every(([name, service]) => inTrace().some(([n, s]) => n === name && s === service)),
      'every span of the trace',
    );
    expect(inTrace()).toEqual(expect.arrayContaining(expected));
    // The API's span is the root: the request came without a traceparent of its own.
    expect(eventsSpan.parentSpanId || undefined).toBeUndefined();

    // The webhook request continues the trace: W3C traceparent `00-<trace id>-<span id>-<flags>`.
    const traceparent = webhook.headers.traceparent as string;
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(traceparent.split('-')[1]).toBe(traceId);
    // …as a child of the webhook delivery activity's span.
    const delivery = collector.spans.find((span) => span.traceId === traceId && span.name === 'RunActivity:deliverWebhooks')!;
    expect(traceparent.split('-')[2]).toBe(delivery.spanId);

    // Log lines carry the trace id: the API's request line and the worker's projection line.
    await until(() => logLines(api).some((line) => line.trace_id === traceId && line.msg === 'request'), 'the API request log line');
    // The worker writes its line before the webhook goes out, but its log is another process's file: wait for it.
    const projectionLines = () => logLines(tracedWorker).filter((line) => line.trace_id === traceId && line.msg === 'projection written');
    await until(() => (projectionLines().length > 0 ? true : undefined), 'the worker projection log line');
    expect(projectionLines()).toHaveLength(1);
  }, 120_000);
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('the worker delivers the webhook without a traceparent, exports no span and logs no trace_id', async () => {
    const id = await registerAndPostEvent(untracedApiUrl, untracedKey);
    const [webhook] = await until(() => (requestsFor(id).length > 0 ? requestsFor(id) : undefined), 'the webhook');
    expect(webhook.headers.traceparent).toBeUndefined();
    // The untraced worker's lines include its projection of this dispatch, none with a trace id.
    await until(() => logLines(untracedWorker).some((line) => line.msg === 'projection written'), 'the projection log line');
    expect(logLines(untracedWorker).filter((line) => 'trace_id' in line)).toEqual([]);
    // Well past the traced processes' 200 ms export delay: nothing came from the untraced worker.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(collector.spans.filter((span) => span.service === 'untraced-worker')).toEqual([]);
  }, 120_000);
});
