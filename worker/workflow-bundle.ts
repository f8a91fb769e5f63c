// The workflow bundle of a worker process, built in a short-lived child process
// (worker/bundle-workflows.ts) instead of inside the worker. The SDK's bundler (webpack + SWC) grows
// the process while it runs, and the worker, a process that lives for weeks, kept that memory: an
// idle worker that bundled in-process peaked at 376–385 MiB and stayed at 269–281 MiB, against
// 250–258 and 186–220 MiB this way (bench/scale README, "Where the memory goes").
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const EXTENSION = new URL(import.meta.url).pathname.slice(-3);
const BUNDLER_ENTRY = fileURLToPath(new URL(`./bundle-workflows${EXTENSION}`, import.meta.url));

export interface WorkflowBundleFile {
  codePath: string;
  /** Removes the file once the worker has read it (Worker.create reads it once). */
  dispose(): Promise<void>;
}

/**
 * Bundles workflows/ with the given workflow interceptor modules (tracing's, when it is on) in a
 * child process and returns the file it wrote. Rejects with the bundler's own message when the
 * bundle cannot be built (a workflow that imports a Node module, a type error SWC cannot strip).
 */
export async function bundleWorkflowsInChildProcess(workflowInterceptorModules: readonly string[] = []): Promise<WorkflowBundleFile> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cds-workflow-bundle-'));
  const codePath = path.join(dir, 'workflow-bundle.js');
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await promisify(execFile)(process.execPath, [...childExecArgv(), BUNDLER_ENTRY, codePath, JSON.stringify(workflowInterceptorModules)], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    await remove();
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`bundling the workflows failed${stderr ? `: ${stderr}` : ''}`, { cause: error });
  }
  return { codePath, dispose: remove };
}

/**
 * From source (tsx), the child needs tsx's loader; it is passed by absolute URL so that the child
 * finds it whatever the working directory. Nothing else of the parent's execArgv is passed on
 * (a heap cap or an inspector port meant for the worker).
 */
function childExecArgv(): string[] {
  return EXTENSION === '.ts' ? ['--import', import.meta.resolve('tsx')] : [];
}
