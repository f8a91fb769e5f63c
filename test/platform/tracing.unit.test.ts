// Tracing off (docs/monitoring.md "Traces"): without OTEL_EXPORTER_OTLP_ENDPOINT startTracing starts
// nothing, and every hook the processes call hands back exactly what it was given, so the request
// path, the Temporal client and worker, the webhook's headers and the log lines are as without it.
import type http from 'node:http';
import { describe, expect, it } from '@jest/globals';
import {
  currentTraceId,
  startTracing,
  temporalClientInterceptors,
  temporalWorkerTracing,
  traceRequests,
  tracingConfigured,
  withTraceContext,
} from '../../platform/tracing.js';

describe('tracing without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('is configured only by a non-empty OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://x/v1/traces' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
  });

  it('starts nothing, and each hook returns its input unchanged', async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await expect(startTracing('card-delivery-api')).resolves.toBe(false);
    const listener: http.RequestListener = () => {};
    expect(traceRequests(listener)).toBe(listener);
    const headers = { 'content-type': 'application/json' };
    expect(withTraceContext(headers)).toBe(headers);
    expect(temporalClientInterceptors()).toBeUndefined();
    expect(temporalWorkerTracing()).toBeUndefined();
    expect(currentTraceId()).toBeUndefined();
  });
});
