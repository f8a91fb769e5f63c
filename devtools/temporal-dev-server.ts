// Starts the Temporal CLI's dev server as a child process with our search attributes registered,
// and waits until its frontend answers. Used by `npm start` (persisted under .data/) and the tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import { stopLeftover } from './tool-cache.js';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes.js';
import { portInUse } from '../platform/listen.js';
import { SERVER_DYNAMIC_CONFIG } from './temporal-server-settings.js';

export interface DevServerOptions {
  cliPath: string;
  port: number;
  uiPort?: number;
  /** SQLite file to persist to; in-memory when absent. */
  dbFilename?: string;
  namespace?: string;
  /** Dynamic config, key → value, over SERVER_DYNAMIC_CONFIG (devtools/temporal-server-settings.ts). */
  dynamicConfig?: Record<string, unknown>;
  logger?: Logger;
  /** The variables that set `port` and `uiPort` (npm start's), named when one of them is taken. */
  portVariables?: { port: string; uiPort: string };
  /** Aborted (the launcher stopped during start-up): a server still starting is stopped and this rejects. */
  signal?: AbortSignal;
}

export interface RunningDevServer {
  address: string;
  uiUrl?: string;
  child: ChildProcess;
  /** Settles when the server exits without stop() being called. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

export async function startDevServer(options: DevServerOptions): Promise<RunningDevServer> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', 'warn'];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  // The server opens SQLite through a `file:` URI built from this name, unescaped: a `#` in the
  // path cuts it there (the history lands in a file of that shorter name, outside our folder), a
  // `?` starts its query and `%xx` is decoded. So the server runs in the file's folder and is given
  // the bare file name, which is ours and holds none of them.
  const cwd = options.dbFilename ? path.dirname(path.resolve(options.dbFilename)) : undefined;
  if (options.dbFilename) args.push('--db-filename', path.basename(options.dbFilename));
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  // The dev server keeps SQLite on one connection; WAL without fsync keeps it from being the bottleneck.
  args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=off');
  for (const [key, value] of Object.entries({ ...SERVER_DYNAMIC_CONFIG, ...options.dynamicConfig }))
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);

  // A persisted server whose launcher died (kill -9) still holds the file and the ports: stop it.
  const pidFile = options.dbFilename ? `${options.dbFilename}.pid` : undefined;
  if (pidFile && existsSync(pidFile)) {
    const leftover = Number(readFileSync(pidFile, 'utf8'));
    if (Number.isInteger(leftover) && leftover > 0 && (await stopLeftover(leftover, 'start-dev', 'SIGTERM'))) {
      options.logger?.warn({ pid: leftover }, 'stopped a Temporal dev server left running by an earlier start');
    }
  }
  // A port held by another process fails the server we spawn, but when the holder is another
  // Temporal (another checkout's npm start) the readiness probe below would take it for ours.
  for (const [port, variable] of [
    [options.port, options.portVariables?.port],
    [options.uiPort, options.portVariables?.uiPort],
  ] as const) {
    if (port && !(await portFree(port))) {
      throw variable ? portInUse(variable, port) : new Error(`127.0.0.1:${port} is already in use by another process`);
    }
  }
  options.signal?.throwIfAborted();
  // Its own process group: a terminal's Ctrl-C reaches only our launcher, which stops the worker
  // before the server it talks to.
  const child = spawn(options.cliPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const output: string[] = [];
  let head = '';
  const keep = (chunk: Buffer) => {
    if (head.length < 2000) head += chunk.toString().slice(0, 2000 - head.length);
    output.push(chunk.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  let stopping = false;
  let spawnError: Error | undefined;
  // A binary that cannot be run (EACCES, ENOENT) ends the start-up below, never as an unhandled error.
  child.once('error', (error) => {
    spawnError = error;
    exited = true;
  });
  if (pidFile && child.pid) writeFileSync(pidFile, String(child.pid));
  // Never outlive the process that started it, whatever way that process ends short of SIGKILL.
  const onProcessExit = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', onProcessExit);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      if (pidFile) rmSync(pidFile, { force: true });
      process.removeListener('exit', onProcessExit);
      resolve({ code, signal });
    }),
  );

  const address = `127.0.0.1:${options.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (options.signal?.aborted) {
      // Stopped as a running one is, so that it removes its pid file; SIGKILL if it does not end.
      if (!exited) {
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.kill('SIGTERM');
        await exit;
        clearTimeout(timer);
      }
      throw new Error('the Temporal dev server start was stopped');
    }
    if (exited) {
      // A Go panic puts its reason first and a long stack after it: show both ends.
      const tail = output.join('').slice(-2000);
      if (spawnError) throw new Error(`Temporal dev server could not be started: ${spawnError.message}`);
      throw new Error(
        `Temporal dev server exited during start-up:\n${head}${tail.startsWith(head) ? tail.slice(head.length) : `\n…\n${tail}`}`,
      );
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`Temporal dev server did not answer on ${address} within 60 s\n${output.join('').slice(-3000)}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  options.logger?.info({ address, uiPort: options.uiPort, dbFilename: options.dbFilename }, 'Temporal dev server started');
  return {
    address,
    uiUrl: options.uiPort ? `http://localhost:${options.uiPort}` : undefined,
    child,
    exited: exit.then((result) => (stopping ? new Promise<never>(() => {}) : result)),
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        if (exited) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Whether nothing listens on 127.0.0.1:port (a listener on any address of the host counts). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}
