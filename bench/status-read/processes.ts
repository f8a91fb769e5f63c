// Child processes of the status-read benchmark (each server and each load run in its own process)
// and the CPU time they use, read from /proc so that no process has to report on itself.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Starts `node --import tsx <script>` (this Node, the repo as cwd); `nodeFlags` go before the script. */
/** What the image (Dockerfile) sets for the service's processes that a benchmark must start with too. */
export const IMAGE_ENV = { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' };

/**
 * What the chart gives the worker's container beyond the image: `worker.nodeOptions` of
 * deploy/helm/card-delivery/values.yaml as NODE_OPTIONS (its V8 heap cap). A container's memory
 * limit would otherwise size V8's heaps; on a bare host V8 sizes them from the host's memory and
 * collects lazily. BENCH_WORKER_NODE_OPTIONS replaces it for an experiment (empty: none).
 */
export const WORKER_DEPLOY_ENV: { NODE_OPTIONS?: string } = (() => {
  const values = parseYaml(readFileSync(new URL('../../deploy/helm/card-delivery/values.yaml', import.meta.url), 'utf8')) as {
    worker: { nodeOptions?: string };
  };
  const nodeOptions = process.env.BENCH_WORKER_NODE_OPTIONS ?? values.worker.nodeOptions ?? '';
  return nodeOptions ? { NODE_OPTIONS: nodeOptions } : {};
})();

export function startScript(script: string, env: NodeJS.ProcessEnv, nodeFlags: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, '--import', 'tsx', fileURLToPath(new URL(script, import.meta.url))], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** The first JSON line the child prints on stdout; rejects if it exits first. */
export function firstJsonLine<T>(child: ChildProcess, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const onExit = (code: number | null) => reject(new Error(`${what} exited (code ${code}) before reporting`));
    child.once('exit', onExit);
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      child.off('exit', onExit);
      lines.close();
      resolve(JSON.parse(line) as T);
    });
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** utime + stime of one process, in seconds; 0 when it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return -1;
  }
}

/** utime + stime of the children a process has reaped (cutime + cstime), in seconds. */
function reapedChildrenCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of a Postgres postmaster and its backends (the embedded cluster only): the live
 * backends plus those that have exited, whose time the postmaster inherits when it reaps them.
 */
export function postgresCpuSeconds(postmasterPid: number): number {
  let total = processCpuSeconds(postmasterPid) + reapedChildrenCpuSeconds(postmasterPid);
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (Number.isInteger(pid) && parentOf(pid) === postmasterPid) total += processCpuSeconds(pid);
  }
  return total;
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = values.map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = ticks[3] + ticks[4];
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}
