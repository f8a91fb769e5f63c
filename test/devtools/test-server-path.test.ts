// The time-skipping test server's wrapper is a shell script naming java and the classpath file by
// their paths, which sit in the tool cache: under $HOME, XDG_CACHE_HOME or CDS_TOOL_CACHE, any of
// which may hold quotes, `$` and backquotes. The wrapper must start the server all the same (the
// classpath comes from the machine's ~/.m2, so this resolves offline once CI has run). No
// backslash: Debian's /usr/bin/mvn script itself cannot run from a folder whose path holds one.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { resolveTestServer } from '../../devtools/test-server.js';
import { until } from '../support/until.js';

describe('the Temporal test server wrapper in a tool cache whose path holds shell metacharacters', () => {
  let work: string;
  const previous = process.env.CDS_TOOL_CACHE;

  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'cds-tool-cache-'));
    process.env.CDS_TOOL_CACHE = path.join(work, `Zoë's "tools" $HOME \`id\` & co`);
  });

  afterAll(() => {
    if (previous === undefined) delete process.env.CDS_TOOL_CACHE;
    else process.env.CDS_TOOL_CACHE = previous;
    rmSync(work, { recursive: true, force: true });
  });

  it('starts the server listening on the port it is given', async () => {
    const wrapper = resolveTestServer();
    expect(wrapper.startsWith(process.env.CDS_TOOL_CACHE!)).toBe(true);
    const port = await freePort();
    const child = spawn(wrapper, [String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      const listening = () =>
        new Promise<boolean>((resolve) => {
          const socket = net.connect({ host: '127.0.0.1', port }, () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('error', () => resolve(false));
        });
      await until(async () => child.exitCode !== null || (await listening()), `the test server on ${port}`, 60_000);
      expect(child.exitCode === null ? 'listening' : `exited with ${child.exitCode}: ${output}`).toBe('listening');
    } finally {
      child.kill('SIGKILL');
    }
  }, 180_000);
});
