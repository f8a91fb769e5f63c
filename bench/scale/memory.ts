// Resident memory of the benchmark's processes, read from /proc so that no process reports on
// itself: each process's VmHWM (the kernel's own peak of resident memory) and VmRSS sampled once a
// second, and for Postgres (postmaster + backends, which share their buffers) the sum of their
// proportional set sizes (Pss, /proc/<pid>/smaps_rollup), so shared pages are counted once.
import { readdirSync, readFileSync } from 'node:fs';

const MIB = 1024 * 1024;

/** A field of /proc/<pid>/status in bytes (`VmHWM`, `VmRSS`); 0 when the process is gone. */
export function statusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function childrenOf(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) pids.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function pssBytes(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Postgres: the postmaster and its backends, Pss summed (shared buffers counted once). */
export function postgresPssBytes(postmasterPid: number): number {
  return [postmasterPid, ...childrenOf(postmasterPid)].reduce((sum, pid) => sum + pssBytes(pid), 0);
}

export interface MemoryFigures {
  /** VmRSS when the window began (Postgres: Pss sum), MiB. */
  startMiB: number;
  /** Highest VmRSS seen by the 1 s sampler (Postgres: highest Pss sum), MiB. */
  sampledPeakMiB: number;
  /** VmHWM at the end of the window (Postgres: the postmaster's own), MiB; the kernel's peak over the process's life. */
  vmHwmMiB: number;
  /** VmRSS at the end of the window (Postgres: Pss sum), MiB. */
  endMiB: number;
}

export type MemorySource = { pid: () => number | undefined; kind: 'process' } | { pid: () => number | undefined; kind: 'postgres' };

/** Samples every source once a second until stopped; `stop()` returns the figures per name. */
export function startMemorySampler(sources: Record<string, MemorySource>): { stop(): Record<string, MemoryFigures> } {
  const peaks: Record<string, number> = Object.fromEntries(Object.keys(sources).map((name) => [name, 0]));
  const read = (source: MemorySource) => {
    const pid = source.pid();
    if (!pid) return 0;
    return source.kind === 'postgres' ? postgresPssBytes(pid) : statusBytes(pid, 'VmRSS');
  };
  const sample = () => {
    for (const [name, source] of Object.entries(sources)) peaks[name] = Math.max(peaks[name], read(source));
  };
  const start = Object.fromEntries(Object.entries(sources).map(([name, source]) => [name, read(source)]));
  sample();
  const timer = setInterval(sample, 1000);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return Object.fromEntries(
        Object.entries(sources).map(([name, source]) => {
          const pid = source.pid();
          return [
            name,
            {
              startMiB: Math.round(start[name] / MIB),
              sampledPeakMiB: Math.round(peaks[name] / MIB),
              vmHwmMiB: pid ? Math.round(statusBytes(pid, 'VmHWM') / MIB) : 0,
              endMiB: Math.round(read(source) / MIB),
            },
          ];
        }),
      );
    },
  };
}
