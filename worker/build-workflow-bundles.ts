// `npm run build`'s last step (package.json), run on the compiled tree: bundles the compiled
// workflows/ with the SDK's bundler (webpack and SWC) into dist/workflow-bundles/, once without
// workflow interceptors and once with tracing's, so that the image's worker loads a file
// (worker/workflow-bundle.ts workflowBundleFile) and the image ships without the bundler
// (deploy/image/drop-workflow-bundler.mjs). Usage: node dist/worker/build-workflow-bundles.js
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_INTERCEPTORS_PATH } from '../platform/tracing.js';
import { PREBUILT_WORKFLOW_BUNDLES } from './workflow-bundle.js';
import { WORKFLOWS_PATH } from './workflows-path.js';

if (!import.meta.url.endsWith('.js')) {
  console.error('build-workflow-bundles runs on the compiled tree: node dist/worker/build-workflow-bundles.js');
  process.exit(2);
}
const bundles: [file: string, interceptors: string[]][] = [
  [PREBUILT_WORKFLOW_BUNDLES.plain, []],
  [PREBUILT_WORKFLOW_BUNDLES.tracing, [WORKFLOW_INTERCEPTORS_PATH]],
];
for (const [file, workflowInterceptorModules] of bundles) {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules,
    // Only warnings and errors: webpack's progress is noise in the build's output.
    logger: {
      log: () => {},
      trace: () => {},
      debug: () => {},
      info: () => {},
      warn: (message) => console.error(message),
      error: (message) => console.error(message),
    },
  });
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, code);
  console.log(`${path.relative(process.cwd(), file)}: ${Math.round(code.length / 1024)} KiB`);
}
