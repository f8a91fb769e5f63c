// The event-cost benchmark's meters, all read from outside the service: CPU seconds of a process
// tree from /proc (the process, its live descendants, and the children any of them has reaped), and
// Postgres's own counters, pg_stat_statements and pg_stat_database, read from the cluster's
// `postgres` database so that the driver's reads never count.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  ppid: number;
  /** utime + stime, ticks. */
  own: number;
  /** cutime + cstime (children it has waited for), ticks. */
  reaped: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name (which may hold spaces): state is field 3, ppid 4, utime 14 … cstime 17.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined;
  }
}

/** CPU seconds used so far by each tree rooted at one of `roots` (name → pid); 0 for a tree that is gone. */
export function treeCpuSeconds(roots: Record<string, number | undefined>): Record<string, number> {
  const stats = new Map<number, Stat>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (stat) stats.set(pid, stat);
  }
  const children = new Map<number, number[]>();
  for (const [pid, stat] of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  const sum = (pid: number): number => {
    const stat = stats.get(pid);
    if (!stat) return 0;
    return stat.own + stat.reaped + (children.get(pid) ?? []).reduce((total, child) => total + sum(child), 0);
  };
  return Object.fromEntries(Object.entries(roots).map(([name, pid]) => [name, pid ? sum(pid) / CLOCK_TICKS : 0]));
}

/**
 * CPU seconds used so far by one process, by thread name (`/proc/<pid>/task/<tid>/comm`: a Node
 * process's `MainThread`, its worker threads, V8's `V8Worker` helpers, libuv's pool, a native
 * addon's own threads), and `(exited threads)`: the process's own total less its live threads',
 * which is what threads that ran and ended have left there (the kernel adds a thread's time to its
 * process when it exits). Children are not included. Empty once the process is gone.
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const byThread: Record<string, number> = {};
  let live = 0;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byThread;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      byThread[name] = (byThread[name] ?? 0) + ticks / CLOCK_TICKS;
      live += ticks;
    } catch {
      // the thread ended between the listing and the read: its time is in the process's total
    }
  }
  const own = readStat(pid)?.own;
  if (own !== undefined) byThread['(exited threads)'] = Math.max(0, own - live) / CLOCK_TICKS;
  return byThread;
}

/** Utility statements (no plan): transaction control, SET/SHOW, LOCK, LISTEN/NOTIFY, … */
export const UTILITY =
  /^\s*(BEGIN|COMMIT|ROLLBACK|END|ABORT|START\s+TRANSACTION|SAVEPOINT|RELEASE|SET|RESET|SHOW|DISCARD|DEALLOCATE|PREPARE\s+TRANSACTION|LISTEN|UNLISTEN|NOTIFY|LOCK|CALL|DO|VACUUM|ANALYZE)\b/i;

export interface StatementRow {
  query: string;
  calls: number;
  toplevel: boolean;
  utility: boolean;
}

export async function resetStatements(stats: pg.Client): Promise<void> {
  await stats.query('SELECT pg_stat_statements_reset()');
}

/** pg_stat_statements of `database` since the last reset, most called first. */
export async function readStatements(stats: pg.Client, database: string): Promise<{ rows: StatementRow[]; deallocations: number }> {
  const { rows } = await stats.query<{ query: string; calls: number; toplevel: boolean }>(
    `SELECT s.query, s.calls::float8 AS calls, s.toplevel
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1
      ORDER BY s.calls DESC, s.query`,
    [database],
  );
  const {
    rows: [info],
  } = await stats.query<{ dealloc: number }>('SELECT dealloc::float8 AS dealloc FROM pg_stat_statements_info');
  return {
    rows: rows.map((row) => ({ ...row, query: row.query.replace(/\s+/g, ' ').trim(), utility: UTILITY.test(row.query) })),
    deallocations: info.dealloc,
  };
}

/** Committed and rolled-back transactions of `database` so far (pg_stat_database; backends report within ~10 s of going idle). */
export async function readTransactions(stats: pg.Client, database: string): Promise<{ commit: number; rollback: number }> {
  const {
    rows: [row],
  } = await stats.query<{ commit: number; rollback: number }>(
    'SELECT xact_commit::float8 AS commit, xact_rollback::float8 AS rollback FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  return row;
}
