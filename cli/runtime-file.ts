// Where a running `npm start` tells other local processes (the admin CLI) how to reach it: the
// embedded Postgres URL, the API and dashboard URLs, and the Temporal address, namespace and task queue. `npm start`
// writes the file once its components are up and deletes it on exit; `npm run admin` reads it when DATABASE_URL
// (for Temporal: TEMPORAL_ADDRESS) is not set.
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * `<project root>/.data/runtime.json`. CDS_RUNTIME_FILE moves it (tests, or two checkouts that must
 * not see each other's service).
 */
export const RUNTIME_FILE = process.env.CDS_RUNTIME_FILE ?? path.join(PROJECT_ROOT, '.data', 'runtime.json');

const runtimeInfoSchema = z.object({
  databaseUrl: z.string().min(1),
  apiUrl: z.string().min(1),
  /** Where browsers reach its dashboard: DASHBOARD_BASE_URL, else apiUrl (the admin CLI's set-password links). */
  dashboardUrl: z.string().min(1).optional(),
  temporalAddress: z.string().min(1),
  /**
   * Its TEMPORAL_NAMESPACE and TEMPORAL_TASK_QUEUE: a command that reaches its Temporal must look in
   * its namespace and start work on the queue its worker polls. Absent in a file of an earlier version.
   */
  temporalNamespace: z.string().min(1).optional(),
  temporalTaskQueue: z.string().min(1).optional(),
  temporalUiUrl: z.string().min(1).optional(),
  pid: z.number().int().positive(),
});

export type RuntimeInfo = z.infer<typeof runtimeInfoSchema>;

export function writeRuntimeFile(info: RuntimeInfo, file: string = RUNTIME_FILE): void {
  const checked = runtimeInfoSchema.parse(info);
  mkdirSync(path.dirname(file), { recursive: true });
  // Written to a temporary name and renamed, so a reader never sees half a file. Mode 0600: the
  // database URL carries a password.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(checked, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/** The file's contents, or undefined when there is no file or it is not one of ours. */
export function readRuntimeFile(file: string = RUNTIME_FILE): RuntimeInfo | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = runtimeInfoSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Deletes the file if it still describes the process `pid` (default: this one), so a stopping
 * service never removes the file of another one started since.
 */
export function removeRuntimeFile(pid: number = process.pid, file: string = RUNTIME_FILE): void {
  const current = readRuntimeFile(file);
  if (current && current.pid !== pid) return;
  rmSync(file, { force: true });
}

/** True when the process that wrote the file still runs (a crash can leave the file behind). */
export function isRuntimeAlive(info: RuntimeInfo): boolean {
  try {
    process.kill(info.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
