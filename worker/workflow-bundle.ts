// The workflow bundle of a worker process. From the compiled tree (dist/, the image) it is the file
// `npm run build` wrote (worker/build-workflow-bundles.ts), so the worker never runs the bundler and
// the image ships without it (deploy/image/drop-workflow-bundler.mjs). From source (`npm start`, the
// tests) it is built in a short-lived child process
// (worker/bundle-workflows.ts) instead of inside the worker. The SDK's bundler (webpack + SWC) grows
// the process while it runs, and the worker, a process that lives for weeks, kept that memory: an
// idle worker that bundled in-process peaked at 376–385 MiB and stayed at 269–281 MiB, against
// 250–258 and 186–220 MiB this way (bench/scale README, "Where the memory goes").
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const EXTENSION = new URL(import.meta.url).pathname.slice(-3);
const BUNDLER_ENTRY = fileURLToPath(new URL(`./bundle-workflows${EXTENSION}`, import.meta.url));

/**
 * The bundles `npm run build` writes into dist/workflow-bundles/: one without workflow interceptors,
 * one with tracing's (platform/tracing.ts WORKFLOW_INTERCEPTORS_PATH).
 */
export const PREBUILT_WORKFLOW_BUNDLES = {
  plain: fileURLToPath(new URL('../workflow-bundles/workflows.js', import.meta.url)),
  tracing: fileURLToPath(new URL('../workflow-bundles/workflows-tracing.js', import.meta.url)),
};

export interface WorkflowBundleFile {
  codePath: string;
  /** Removes the file once the worker has read it (Worker.create reads it once). */
  dispose(): Promise<void>;
}

/**
 * The worker's workflow bundle: the prebuilt one when this is the compiled tree and `npm run build`
 * wrote it (with tracing's interceptors when `tracingModules` names them), else bundled now in a child
 * process (from source, where the bundle follows the workflows as they are edited).
 */
export async function workflowBundleFile(tracingModules: readonly string[] = []): Promise<WorkflowBundleFile> {
  const prebuilt = PREBUILT_WORKFLOW_BUNDLES[tracingModules.length > 0 ? 'tracing' : 'plain'];
  if (EXTENSION === '.js' && existsSync(prebuilt)) return { codePath: prebuilt, dispose: async () => {} };
  return bundleWorkflowsInChildProcess(tracingModules);
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
