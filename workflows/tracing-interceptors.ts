// The workflow interceptors of tracing (docs/monitoring.md "Traces"), not a workflow: added to the
// bundle through the worker's `interceptors.workflowModules` only when OTEL_EXPORTER_OTLP_ENDPOINT is
// set (platform/tracing.ts). In the sandbox they continue the trace the client started (the signal's
// headers) with a span per workflow task handler, and carry it on to each activity scheduled; the
// spans leave the sandbox through the worker's `exporter` sink. They add headers only, never
// commands, so histories recorded with or without them replay alike (test/workflows/replay.test.ts).
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [new OpenTelemetryInboundInterceptor()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
