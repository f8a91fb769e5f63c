// `npm run bench:prediction-quality` (README.md): by default a family of networks drawn from the
// seeds (family-run.ts, in process against an embedded Postgres); BENCH_SHAPE=today measures the
// network the model was developed on the same way, and BENCH_SHAPE=today BENCH_SERVICE=1 runs it
// through the real API and worker with the `predictions quality` check (service-run.ts).
if (process.env.BENCH_SHAPE === 'today' && process.env.BENCH_SERVICE === '1') await import('./service-run.js');
else await import('./family-run.js');
