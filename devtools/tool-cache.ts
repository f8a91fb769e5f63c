// Where downloaded platform components live between runs (shared by every clone on the machine),
// and small helpers to run commands and fetch things into it exactly once.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

export function toolCacheDir(...parts: string[]): string {
  const base =
    process.env.CDS_TOOL_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'card-delivery-status-service');
  const dir = path.join(base, ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The first executable called `name` on PATH, if any. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return existsSync(file);
  } catch {
    return false;
  }
}

/** Runs a command to completion; returns whether it exited 0, with its output for error messages. */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 600_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}` };
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export class MissingComponentError extends Error {}

/**
 * Stops a process left over by a launcher that died without cleaning up (kill -9, OOM): only when
 * the pid is alive and its command line names `expected`, so a reused pid is never touched.
 * Returns once it has exited (or after `timeoutMs`).
 */
export async function stopLeftover(pid: number, expected: string, signal: NodeJS.Signals, timeoutMs = 15_000): Promise<boolean> {
  const commandLine = () => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return undefined;
    }
  };
  const initial = commandLine();
  if (!initial?.includes(expected)) return false;
  process.kill(pid, signal);
  const deadline = Date.now() + timeoutMs;
  while (commandLine() !== undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return true;
}
