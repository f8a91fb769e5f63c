// `npm run bench:history-import`: how long `npm run admin -- history import FILE.csv --json` takes,
// as an operator runs it (the CLI as its own process, the file on disk), on an embedded Postgres of
// its own: a file of BENCH_ROWS rows (150,000, the size test/e2e/history-cli.test.ts imports) and
// one ten times larger, BENCH_ROUNDS and BENCH_LARGE_ROUNDS rounds, the table emptied between two. Half the rows'
// dates are ISO timestamps with offsets (the API's format), half plain dates; 900 postal codes of
// four countries. Results go to results/<date>.md and .json (README.md explains them).
import { spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { migrate } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import { median } from '../../domain/prediction-quality.js';
import { startPostgres } from '../../devtools/postgres.js';
import { REPO_ROOT } from '../status-read/processes.js';
import { freeResultsName } from '../results-name.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROWS = env('BENCH_ROWS', 150_000);
const ROUNDS = env('BENCH_ROUNDS', 3);
/** Rounds of the file ten times larger (each takes minutes). */
const LARGE_ROUNDS = env('BENCH_LARGE_ROUNDS', 1);
const RESULTS_DIR = path.join(REPO_ROOT, 'bench/history-import/results');
const TSX_CLI = path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');
const COUNTRIES = ['FR', 'DE', 'IT', 'ES'];
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const today = new Date().toISOString().slice(0, 10);
const loadAtStart = os.loadavg()[0].toFixed(2);

/** Writes `rows` history rows: dispatched over the last year, delivered 1–6 days later. */
async function writeCsv(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  const day = 86_400_000;
  const start = Date.parse(`${today}T00:00:00Z`) - 365 * day;
  out.write('postal_code,country_code,dispatch_date,delivered_date\n');
  for (let i = 0; i < rows; i += 1) {
    const dispatched = start + (i % 358) * day + (i % 13) * 3_600_000;
    const delivered = dispatched + (1 + (i % 6)) * day;
    const country = COUNTRIES[i % COUNTRIES.length];
    const code = String(10_000 + ((i * 7919) % 900) * 97).slice(0, 5);
    const line =
      i % 2 === 0
        ? `${code},${country},${new Date(dispatched).toISOString().slice(0, 10)},${new Date(delivered).toISOString().slice(0, 10)}\n`
        : `${code},${country},${new Date(dispatched).toISOString().replace('Z', '+00:00')},${new Date(delivered).toISOString()}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Runs the import as its own process; its wall time in seconds and what it printed. */
function runImport(file: string, databaseUrl: string): Promise<{ seconds: number; printed: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TSX_CLI, 'cli/admin.ts', 'history', 'import', file, '--json'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? REPO_ROOT, DATABASE_URL: databaseUrl, CDS_RUNTIME_FILE: '/nonexistent/runtime.json' }, // prettier-ignore
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`history import exited ${code}: ${printed}`));
      else resolve({ seconds: (performance.now() - started) / 1000, printed });
    });
  });
}

const work = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-history-import-'));
chmodSync(work, 0o755); // the embedded cluster runs as an unprivileged user when we are root
const pg = await startPostgres({ dataDir: path.join(work, 'pg'), persistent: false });
const pool = createPool(pg.url, { max: 2, applicationName: 'bench-history-import' });
const results: Array<{ rows: number; seconds: number[]; medianSeconds: number; rowsPerSecond: number }> = [];
try {
  await migrate(pg.url);
  for (const [rows, rounds] of [
    [ROWS, ROUNDS],
    [10 * ROWS, LARGE_ROUNDS],
  ]) {
    const file = path.join(work, `history-${rows}.csv`);
    await writeCsv(file, rows);
    const seconds: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      await pool.query('TRUNCATE transit_history');
      const run = await runImport(file, pg.url);
      const answer = JSON.parse(run.printed) as { imported: number; skipped: number; errors: unknown[] };
      if (answer.imported !== rows || answer.errors.length > 0) throw new Error(`unexpected answer: ${run.printed}`);
      const { rows: counted } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM transit_history');
      if (counted[0].n !== rows) throw new Error(`${counted[0].n} rows in the table, ${rows} imported`);
      seconds.push(run.seconds);
      log(`${rows} rows, round ${round + 1}: ${run.seconds.toFixed(1)} s`);
    }
    const medianSeconds = median(seconds)!;
    results.push({ rows, seconds, medianSeconds, rowsPerSecond: Math.round(rows / medianSeconds) });
  }
} finally {
  await pool.end();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}

const table = [
  '| rows      | seconds per round | median s | rows/s  |',
  '| --------- | ----------------- | -------- | ------- |',
  ...results.map(
    (r) =>
      `| ${r.rows.toLocaleString('en')} | ${r.seconds.map((s) => s.toFixed(1)).join(', ')} | ${r.medianSeconds.toFixed(1)} | ${r.rowsPerSecond.toLocaleString('en')} |`,
  ),
].join('\n');
const name = freeResultsName(RESULTS_DIR, today);
const header = `# history import, ${today}\n\nLoad average at the start ${loadAtStart}, at the end ${os.loadavg()[0].toFixed(2)}; ${ROUNDS} rounds of the first size, ${LARGE_ROUNDS} of the second; the CLI as its own process (tsx start-up included).\n\n`;
writeFileSync(path.join(RESULTS_DIR, `${name}.md`), `${header}${table}\n`);
writeFileSync(
  path.join(RESULTS_DIR, `${name}.json`),
  `${JSON.stringify({ date: today, loadAtStart, rounds: ROUNDS, largeRounds: LARGE_ROUNDS, results }, null, 2)}\n`,
);
process.stdout.write(`${table}\n`);
