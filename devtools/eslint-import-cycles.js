// An ESLint rule, `local/no-import-cycle`: no module reaches itself through its imports, `import type`
// and `export … from` included. import-x/no-cycle skips type-only imports (they are erased at run
// time), so a cycle whose one direction is type-only passed lint; such a cycle still ties two
// modules' designs together (docs/architecture.md "Layers"). Used by eslint.config.js, shown by
// test/lint/layer-rules.unit.test.ts (the fixtures in test/fixtures/layers/type-cycle/).
// Other modules' imports are read from disk with TypeScript's import scanner and cached for the run;
// our own specifiers resolve as nodenext resolves them (`./x.js` → `./x.ts`). Packages are not followed.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Resolved relative imports per file, for this process (one lint run). */
const cache = new Map();

function resolve(fromFile, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(fromFile), specifier);
  const candidates = base.endsWith('.js')
    ? [base.replace(/\.js$/, '.ts'), base]
    : [base, `${base}.ts`, `${base}.js`, path.join(base, 'index.ts')];
  return candidates.find((file) => /\.[cm]?[jt]s$/.test(file) && existsSync(file));
}

function importsOf(file) {
  let imports = cache.get(file);
  if (!imports) {
    const scanned = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
    imports = [...new Set(scanned.map((f) => resolve(file, f.fileName)).filter(Boolean))];
    cache.set(file, imports);
  }
  return imports;
}

/** The shortest chain of imports from `start` back to `target`, or undefined. */
function pathBack(start, target) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const next of importsOf(file)) {
      if (next === target) {
        const chain = [file];
        for (let at = previous.get(file); at !== undefined; at = previous.get(at)) chain.unshift(at);
        return chain;
      }
      if (!previous.has(next)) {
        previous.set(next, file);
        queue.push(next);
      }
    }
  }
  return undefined;
}

export const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid an import, type-only ones included, that leads back to the importing module.' },
    schema: [],
    messages: { cycle: 'Import cycle, type-only imports included: {{chain}}' },
  },
  create(context) {
    const self = context.physicalFilename;
    const root = context.cwd;
    const check = (source) => {
      if (!source || typeof source.value !== 'string') return;
      const target = resolve(self, source.value);
      if (!target || target === self) return;
      const chain = pathBack(target, self);
      if (chain) context.report({ node: source, messageId: 'cycle', data: { chain: [self, ...chain, self].map((f) => path.relative(root, f)).join(' → ') } }); // prettier-ignore
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

export default { rules: { 'no-import-cycle': noImportCycle } };
