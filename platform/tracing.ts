// OpenTelemetry traces (docs/monitoring.md "Traces"). With OTEL_EXPORTER_OTLP_ENDPOINT set, each
// process starts the OpenTelemetry Node SDK first thing (startTracing) and exports spans as OTLP/JSON
// over HTTP to `<endpoint>/v1/traces`; one trace then runs from the API request through the Temporal
// client call, the workflow task, each activity and the webhook POST (its `traceparent` header).
// Without it nothing here loads: the SDK, the exporter and the Temporal interceptors are imported
// dynamically only when the variable is set, and every hook below is a no-op that returns its input.
//
// No automatic instrumentation (instrumentation-http needs a loader flag to patch modules under
// ESM): the API's server span is made by traceRequests, around the request listener; Temporal's
// spans by @temporalio/interceptors-opentelemetry on the client, the activities and (in the workflow
// sandbox, workflows/tracing-interceptors.ts) the workflows, whose spans leave the sandbox through
// the `exporter` sink.
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import type * as otel from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerInterceptors, WorkerOptions } from '@temporalio/worker';
import { loggablePath } from './request-path.js';

interface Active {
  api: typeof otel;
  tracer: otel.Tracer;
  clientInterceptors: ClientInterceptors;
  workerInterceptors: WorkerInterceptors;
  workflowSinks: NonNullable<WorkerOptions['sinks']>;
  shutdown(): Promise<void>;
}

let active: Active | undefined;
let starting: Promise<boolean> | undefined;

/** Whether this process exports traces: OTEL_EXPORTER_OTLP_ENDPOINT is set (and not empty). */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * Starts the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set; returns whether it did. The service name is
 * OTEL_SERVICE_NAME, else `defaultServiceName`. Idempotent; call it before the Temporal client and
 * worker are created (their interceptors are chosen then).
 */
export function startTracing(defaultServiceName: string): Promise<boolean> {
  starting ??= tracingConfigured()
    ? load(process.env.OTEL_SERVICE_NAME?.trim() || defaultServiceName).then(() => true)
    : Promise.resolve(false);
  return starting;
}

/** Flushes and stops the SDK (a no-op when tracing is off). */
export async function stopTracing(): Promise<void> {
  await active?.shutdown();
}

async function load(serviceName: string): Promise<void> {
  const [api, { NodeSDK }, { OTLPTraceExporter }, { Resource }, { BatchSpanProcessor }, temporalOtel] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  const resource = new Resource({ 'service.name': serviceName });
  // One processor for the process's own spans and for the workflow spans the sink hands over.
  const processor = new BatchSpanProcessor(new OTLPTraceExporter());
  const sdk = new NodeSDK({
    serviceName,
    resource,
    spanProcessors: [processor],
    instrumentations: [],
    // No log export (the SDK would otherwise default to an OTLP log exporter); no metrics reader is
    // made unless OTEL_METRICS_EXPORTER asks for one (metrics are Prometheus, docs/operations.md).
    logRecordProcessors: [],
  });
  sdk.start();
  const clientInterceptors: ClientInterceptors = { workflow: [new temporalOtel.OpenTelemetryWorkflowClientInterceptor()] };
  active = {
    api,
    tracer: api.trace.getTracer('card-delivery'),
    clientInterceptors,
    workerInterceptors: {
      client: clientInterceptors,
      activity: [
        (ctx) => ({
          inbound: new temporalOtel.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new temporalOtel.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
      workflowModules: [WORKFLOW_INTERCEPTORS_PATH],
    },
    workflowSinks: { exporter: temporalOtel.makeWorkflowExporter(processor, resource) },
    shutdown: () => sdk.shutdown(),
  };
}

// workflows/tracing-interceptors.ts from source (tsx), .js from the compiled image (dist/).
export const WORKFLOW_INTERCEPTORS_PATH = fileURLToPath(
  new URL(`../workflows/tracing-interceptors${new URL(import.meta.url).pathname.slice(-3)}`, import.meta.url),
);

/** The Temporal Client's interceptors: the OpenTelemetry client interceptor when tracing is on. */
export function temporalClientInterceptors(): ClientInterceptors | undefined {
  return active?.clientInterceptors;
}

/** A worker's tracing options (interceptors and the workflow span sink); none when tracing is off. */
export function temporalWorkerTracing(): { interceptors: WorkerInterceptors; sinks: NonNullable<WorkerOptions['sinks']> } | undefined {
  return active && { interceptors: active.workerInterceptors, sinks: active.workflowSinks };
}

/**
 * Wraps the API's request listener in a server span (`<METHOD> <route>`, the route template the
 * request metrics recorded, api/middleware/metrics.ts; `<METHOD>` on the status fast path) that is the active context while the request is handled. Tracing off (or not started yet: call
 * startTracing first), the listener itself, untouched.
 */
export function traceRequests(listener: http.RequestListener): http.RequestListener {
  if (!active) return listener;
  const { api, tracer } = active;
  return (req, res) => {
    const method = req.method ?? 'GET';
    const path = loggablePath((req.url ?? '/').split('?')[0]); // a tracking page's token is a credential
    const parent = api.propagation.extract(api.ROOT_CONTEXT, req.headers);
    // Named as OpenTelemetry's HTTP conventions say: `<METHOD> <route>` once the route is known, else
    // `<METHOD>` alone (never the path, whose ids would make every name unique).
    const span = tracer.startSpan(
      method,
      { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } },
      parent,
    );
    res.once('close', () => {
      const route = (res as TracedResponse).traceRoute;
      if (route) span.updateName(`${method} ${route}`).setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
      span.end();
    });
    api.context.with(api.trace.setSpan(parent, span), () => listener(req, res));
  };
}

/** A response whose route template the app records for the server span's name. */
export interface TracedResponse extends http.ServerResponse {
  traceRoute?: string;
}

/** `headers` plus the active context's W3C `traceparent` (and `tracestate`); unchanged when tracing is off. */
export function withTraceContext<T extends Record<string, string>>(headers: T): T {
  if (!active) return headers;
  const carrier: Record<string, string> = { ...headers };
  active.api.propagation.inject(active.api.context.active(), carrier);
  return carrier as T;
}

/** The active span's trace id (for log lines), or undefined: always undefined when tracing is off. */
export function currentTraceId(): string | undefined {
  if (!active) return undefined;
  const span = active.api.trace.getSpan(active.api.context.active());
  const id = span?.spanContext().traceId;
  return id && id !== '00000000000000000000000000000000' ? id : undefined;
}
