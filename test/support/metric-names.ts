// The metric names the service's two /metrics endpoints can serve, for the tests that check names
// written elsewhere (the runbook, the alert rules): ours from the prom-client registry that both
// endpoints serialise (platform/metrics.ts; the worker's server also registers the pending
// deliveries gauge), and the Temporal SDK's worker metrics that the worker's endpoint appends.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { observePendingDeliveries, registry } from '../../platform/metrics.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Every series name the service's own registry serves (a histogram adds `_bucket`, `_sum` and
 * `_count`), with the worker's pending-deliveries gauge registered as its metrics server does. The
 * gauge's loader is never called: nothing here scrapes, only the registered families are listed.
 */
export function servedServiceMetrics(): Set<string> {
  observePendingDeliveries(() => Promise.reject(new Error('not scraped in this test')));
  const names = new Set<string>();
  for (const metric of registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

/**
 * The Temporal SDK worker metrics (without their `temporal_` prefix) that the runbook and the
 * alerts may name: those its Prometheus exporter served to a worker on this SDK version (scraped
 * 2026-11-24), plus the two failure counters it creates only once a call has failed. Each is
 * checked against the native core's text (sdkCoreText), so an SDK upgrade that renames one fails.
 */
export const SDK_METRICS = [
  'activity_execution_failed',
  'activity_execution_latency',
  'activity_schedule_to_start_latency',
  'long_request_failure',
  'num_pollers',
  'request_failure',
  'sticky_cache_size',
  'worker_task_slots_available',
  'worker_task_slots_used',
  'workflow_task_execution_failed',
  'workflow_task_execution_latency',
  'workflow_task_schedule_to_start_latency',
];

/** A Temporal SDK series name (`temporal_x_bucket` too) is known when its base name is one of SDK_METRICS. */
export function isSdkMetric(name: string): boolean {
  if (!name.startsWith('temporal_')) return false;
  const base = name.replace(/^temporal_/, '');
  return SDK_METRICS.includes(base) || SDK_METRICS.includes(base.replace(/_(bucket|sum|count)$/, ''));
}

/** The text of the Temporal SDK's native core, where the names of its worker metrics are written. */
export function sdkCoreText(): string {
  const releases = path.join(ROOT, 'node_modules/@temporalio/core-bridge/releases');
  const platform = readdirSync(releases).sort()[0];
  return readFileSync(path.join(releases, platform, 'index.node')).toString('latin1');
}
