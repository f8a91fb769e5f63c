// Starts one of the service's entry points (`node --import tsx worker/main.ts`, `… api/main.ts`, …) as a real
// process with exactly the environment given (plus PATH and HOME), and waits until it says it is ready.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The ports an `npm start` under test listens on, all free when picked. */
export interface LauncherPorts {
  api: number;
  temporal: number;
  ui: number;
  /** The demo webhook receiver's (DEMO_WEBHOOK_PORT). */
  demoWebhook: number;
}

export async function freeLauncherPorts(): Promise<LauncherPorts> {
  const taken = new Set<number>();
  return {
    api: await restartablePort(taken),
    temporal: await restartablePort(taken),
    ui: await restartablePort(taken),
    demoWebhook: await restartablePort(taken),
  };
}

/**
 * The lowest port of the kernel's ephemeral range, from which it gives outgoing connections their
 * local port. Tests stop `npm start` and start it again on the same ports: one in that range may be
 * taken in between by any test's client connection, and the next start would find it in use.
 */
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
})();

/**
 * A port free on every address, below the ephemeral range, not in `taken` (which it joins): for a
 * process a test stops and starts again on the same port.
 */
export async function restartablePort(taken = new Set<number>()): Promise<number> {
  for (;;) {
    const port = randomInt(10_000, Math.max(EPHEMERAL_LOW, 10_001));
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
}

/**
 * The environment of an `npm start` under test: exactly what a new user's shell would give it, plus
 * its ports, the test run's Temporal CLI and tool cache, and (when given) its own data folder.
 */
export function launcherEnv(ports: LauncherPorts, dataDir?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    CDS_TOOL_CACHE: process.env.CDS_TOOL_CACHE,
    TEMPORAL_CLI_PATH: process.env.TEST_TEMPORAL_CLI,
    ...(dataDir === undefined ? {} : { CDS_DATA_DIR: dataDir, CDS_RUNTIME_FILE: path.join(dataDir, 'runtime.json') }),
    PORT: String(ports.api),
    TEMPORAL_DEV_SERVER_PORT: String(ports.temporal),
    TEMPORAL_DEV_SERVER_UI_PORT: String(ports.ui),
    DEMO_WEBHOOK_PORT: String(ports.demoWebhook),
    LOG_LEVEL: 'warn',
    // Test processes run side by side: each worker metrics server on a port of its own.
    WORKER_METRICS_PORT: '0',
  };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

export interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/**
 * The arguments of `node` that run an entry point as the package.json scripts do: `node --import tsx`,
 * not the tsx CLI, a parent that relays signals and SIGKILLs its child (exit 130) when the child does
 * not report one within 30 ms (a loaded machine).
 */
export const nodeArgsFor = (entry: string): string[] => ['--import', 'tsx', entry];

/** Starts `tsx <entry>` with exactly `env` (plus PATH/HOME) and waits for `ready` in its output. */
export function startEntryPoint(entry: string, env: Record<string, string>, ready: string | RegExp): Promise<Started> {
  const child = spawn(process.execPath, nodeArgsFor(entry), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? ROOT,
      CDS_RUNTIME_FILE: '/nonexistent/runtime.json',
      WORKER_METRICS_PORT: '0', // side by side with other test processes
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return whenReady(child, ready, entry);
}

/** Collects a started child's stdout and stderr and resolves once `ready` shows in them; rejects if it exits first. */
export function whenReady(child: ChildProcess, ready: string | RegExp, what: string): Promise<Started> {
  let text = '';
  child.stdout!.on('data', (chunk) => (text += chunk));
  child.stderr!.on('data', (chunk) => (text += chunk));
  const exited = exitedWithOutput(child);
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (typeof ready === 'string' ? text.includes(ready) : ready.test(text)) {
        clearInterval(timer);
        resolve({ child, output: () => text, exited });
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`${what} exited with ${code} before it was ready:\n${text}`));
    });
  });
}

/**
 * The child's exit code once it has exited and what it wrote has been read: its stdout and stderr
 * ended. 'exit' alone can come before the last chunks of its pipes, so an assertion on the output
 * right after it could miss the final lines. A grandchild that holds the pipes open does not hold
 * this up for more than 5 s.
 */
export function exitedWithOutput(child: ChildProcess): Promise<number | null> {
  const ended = (stream: NodeJS.ReadableStream | null) =>
    stream && !(stream as { readableEnded?: boolean }).readableEnded
      ? new Promise<void>((resolve) => stream.once('close', () => resolve()))
      : Promise.resolve();
  return new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))).then(async (code) => {
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, 5_000)));
    await Promise.race([Promise.all([ended(child.stdout), ended(child.stderr)]), cap]);
    clearTimeout(timer);
    return code;
  });
}

/** Whether a process with this pid is alive (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether something accepts connections on this loopback port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
