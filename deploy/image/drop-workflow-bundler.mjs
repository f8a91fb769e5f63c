// Removes the workflow bundler from a production node_modules: webpack, SWC, their loaders and every
// package only they need. The image's workflows are bundled while it is built (`npm run build` →
// dist/workflow-bundles/, worker/build-workflow-bundles.ts) and the worker loads that file
// (worker/create-worker.ts), so the bundler never runs in the image. @temporalio/worker still
// `require`s webpack when it loads (its bundler module), so a stub takes webpack's place and says
// why when anything calls it. Run by deploy/image/prune-node-modules.sh.
// Usage: node drop-workflow-bundler.mjs <node_modules directory>
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const BUNDLER = ['webpack', '@swc/core', 'swc-loader', 'source-map-loader'];
const modules = path.resolve(process.argv[2] ?? 'node_modules');
const tree = path.dirname(modules);
// npm's record of what it installed here: "node_modules/a" and "node_modules/a/node_modules/b" keys.
const installed = JSON.parse(readFileSync(path.join(modules, '.package-lock.json'), 'utf8')).packages;
const root = JSON.parse(readFileSync(path.join(tree, 'package.json'), 'utf8'));

/** Where Node finds `name` from the package at `from` (a lock key, '' for the project). */
function resolve(from, name) {
  for (let dir = from; ; dir = dir.includes('/node_modules/') ? dir.slice(0, dir.lastIndexOf('/node_modules/')) : '') {
    const key = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (installed[key]) return key;
    if (!dir) return undefined;
  }
}

const reachable = new Set();
const queue = Object.keys(root.dependencies ?? {}).map((name) => resolve('', name));
while (queue.length > 0) {
  const key = queue.pop();
  if (!key || reachable.has(key)) continue;
  const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
  if (BUNDLER.includes(name)) continue;
  reachable.add(key);
  const entry = installed[key];
  const names = Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies });
  queue.push(...names.map((dependency) => resolve(key, dependency)));
}

let removed = 0;
for (const key of Object.keys(installed)) {
  if (!key || reachable.has(key) || installed[key].link) continue;
  const dir = path.join(tree, key);
  if (existsSync(dir)) {
    rmSync(dir, { recursive: true, force: true });
    removed += 1;
  }
}

// Scopes left empty (@swc).
for (const scope of readdirSync(modules).filter((name) => name.startsWith('@'))) {
  if (readdirSync(path.join(modules, scope)).length === 0) rmSync(path.join(modules, scope), { recursive: true });
}

const stub = path.join(modules, 'webpack');
mkdirSync(stub, { recursive: true });
writeFileSync(
  path.join(stub, 'package.json'),
  `${JSON.stringify({ name: 'webpack', version: '0.0.0-removed', main: 'index.js' }, null, 2)}\n`,
);
writeFileSync(
  path.join(stub, 'index.js'),
  `// Stand-in for webpack in the image (deploy/image/drop-workflow-bundler.mjs): the workflows were bundled
// during the image build (dist/workflow-bundles/), so the worker never bundles here.
function webpack() {
  throw new Error('webpack is not in this image: the worker loads the workflow bundle built with it (dist/workflow-bundles/)');
}
module.exports = { webpack };
`,
);
process.stdout.write(`workflow bundler removed: ${removed} packages\n`);
