// Child-process entry of worker/workflow-bundle.ts: bundles workflows/ (and the given workflow
// interceptor modules) with the SDK's bundler and writes the code to the file named by its first
// argument. Run in a process of its own so that webpack's memory (hundreds of MiB, which the
// allocator keeps) leaves with it instead of staying in the worker for its whole life.
// Usage: node [--import tsx] worker/bundle-workflows.(ts|js) <out-file> '<json: interceptor module paths>'
import { writeFile } from 'node:fs/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from './workflows-path.js';

const [outFile, interceptorsJson = '[]'] = process.argv.slice(2);
if (!outFile) {
  console.error('usage: bundle-workflows <out-file> [<json array of workflow interceptor modules>]');
  process.exit(2);
}
const { code } = await bundleWorkflowCode({
  workflowsPath: WORKFLOWS_PATH,
  workflowInterceptorModules: JSON.parse(interceptorsJson) as string[],
  // Only errors reach the parent (on stderr); webpack's progress is noise in the worker's log.
  logger: {
    log: () => {},
    trace: () => {},
    debug: () => {},
    info: () => {},
    warn: (message) => console.error(message),
    error: (message) => console.error(message),
  },
});
await writeFile(outFile, code);
