// What the worker's /metrics keeps of the Temporal SDK exporter's text (worker/metrics-server.ts):
// only `temporal_*` families, so a name of ours (`cds_*`, prom-client's `process_*`, `nodejs_*`)
// can never be declared twice in the merged answer.
import { describe, expect, it } from '@jest/globals';
import { temporalFamiliesOnly } from '../../worker/metrics-server.js';
import { parseExposition } from '../support/prometheus.js';

describe('temporalFamiliesOnly', () => {
  it('keeps the temporal_ families whole and drops any other family with its HELP and TYPE lines', () => {
    const sdk = [
      '# HELP temporal_num_pollers Current number of pollers',
      '# TYPE temporal_num_pollers gauge',
      'temporal_num_pollers{poller_type="activity_task",task_queue="q"} 5',
      '# HELP process_cpu_seconds_total Total CPU',
      '# TYPE process_cpu_seconds_total counter',
      'process_cpu_seconds_total 1.5',
      '# TYPE temporal_request counter',
      'temporal_request{operation="PollActivityTaskQueue"} 12',
      '',
    ].join('\n');
    const kept = parseExposition(temporalFamiliesOnly(sdk));
    expect(kept.types).toEqual([
      ['temporal_num_pollers', 'gauge'],
      ['temporal_request', 'counter'],
    ]);
    expect(kept.samples.map((s) => s.name)).toEqual(['temporal_num_pollers', 'temporal_request']);
  });

  it('gives nothing for an answer without temporal_ families', () => {
    expect(temporalFamiliesOnly('# TYPE up gauge\nup 1\n')).toBe('');
  });
});
