// The operator CLI's output read by a program that stops early, as `npm run -s admin -- issuer list
// | head` does: the reader closes the pipe while the CLI still writes. The CLI ends quietly with exit
// code 0, as it would had the reader read everything; before, Node's unhandled EPIPE printed a stack
// trace and exited 1 (a `set -o pipefail` script then failed on a successful command).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool } from '../../db/pool.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Far more than a pipe's buffer (64 KiB) holds, in either output format. */
const ISSUERS = 5_000;

let database: ScratchDatabase;

beforeAll(async () => {
  database = await createScratchDatabase('admin_pipe', { migrate: true });
  const pool = createPool(database.url);
  try {
    await pool.query(`INSERT INTO issuers (id, name) SELECT 'iss_pipe' || g, 'Pipe Issuer ' || g FROM generate_series(1, $1::int) g`, [ISSUERS]); // prettier-ignore
  } finally {
    await pool.end();
  }
}, 60_000);

afterAll(async () => {
  await database?.drop();
});

/** `set -o pipefail; <cli args> | head -n 2`: the pipeline's exit code (the CLI's, when it fails) and what each side wrote. */
function pipedIntoHead(args: string[]): Promise<{ code: number | null; head: string; stderr: string }> {
  const cli = [process.execPath, '--import', 'tsx', path.join(ROOT, 'cli', 'admin.ts'), ...args].map((word) => `'${word}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -o pipefail; ${cli} | head -n 2`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? ROOT, CDS_RUNTIME_FILE: '/nonexistent/runtime.json', DATABASE_URL: database.url }, // prettier-ignore
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let head = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (head += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, head, stderr }));
  });
}

describe('the operator CLI piped into a reader that stops early', () => {
  it.each([[['issuer', 'list']], [['issuer', 'list', '--json']]])(
    '%j | head -n 2: the first lines, exit code 0, nothing on stderr',
    async (args) => {
      const result = await pipedIntoHead(args);
      expect(result).toEqual({ code: 0, head: expect.any(String), stderr: '' });
      const lines = result.head.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(args.includes('--json') ? /^\{$/ : /^ID\s+NAME/);
    },
  );
});
