// The dynamic configuration every Temporal server of this service runs with, beyond the server's
// defaults: the dev server (devtools/temporal-dev-server.ts: `npm start`, the tests, the benchmarks), the
// production server the tests and benchmarks build (devtools/temporal-server.ts) and the deployed
// one (deploy/temporal/dynamicconfig/production-sql.yaml, checked against this list by
// test/deploy/compose.unit.test.ts).
export const SERVER_DYNAMIC_CONFIG = {
  // Eager activity dispatch: the server hands a webhook delivery's activity task back in its answer
  // to the workflow task that scheduled it, to the worker that completed that task (which reserved
  // a slot for it), instead of queueing it for the next activity poll. Off by default in the server
  // and in the CLI's dev server; the SDK asks for it by default (maxEagerActivityReservationsPerWorkflowTask 3).
  // Measured in bench/webhook-latency (BENCH_EAGER_ACTIVITIES=0 turns it off).
  'system.enableActivityEagerExecution': true,
} as const satisfies Record<string, unknown>;
