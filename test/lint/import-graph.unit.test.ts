// The import graph of the product, walked from what production runs (the entry points the image
// and the chart start, and the workflow code the worker bundles): none of it reaches devtools/
// (the development engines, left out of dist/ by tsconfig.build.json), test/ or bench/; every import
// between two folders goes down the layers of docs/architecture.md "Layers", never back up; and no
// two modules import each other, even through others or by `import type` (local/no-import-cycle in
// eslint.config.js checks the same per file; this checks the whole graph at once).
// Files are parsed with the TypeScript compiler API; imports are resolved as nodenext resolves our
// own `./x.js` specifiers (to `./x.ts`). Packages are not followed.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What the image runs (Dockerfile, the chart, docker-compose), and the workflows the worker bundles. */
const ENTRY_POINTS = [
  'api/main.ts',
  'worker/main.ts',
  'db/migrate-cli.ts',
  'cli/admin.ts',
  'workflows/index.ts',
  'worker/bundle-workflows.ts',
];

/**
 * The layers from the innermost out, each with the folders it may import (docs/architecture.md
 * "Layers"). A folder may import only folders listed before it: that is "never back up". The one
 * exception is the workflow sandbox's `import type` of activities (erased, so nothing runs).
 */
const LAYERS: [folder: string, imports: string[]][] = [
  ['domain', []],
  ['platform', []],
  ['db', ['domain', 'platform']],
  ['temporal', ['domain', 'platform']],
  ['ingest', ['domain', 'platform', 'db', 'temporal']],
  ['activities', ['domain', 'platform', 'db', 'temporal', 'ingest']],
  ['workflows', ['domain', 'temporal']],
  ['worker', ['domain', 'platform', 'db', 'temporal', 'activities']],
  ['dashboard', ['domain', 'platform', 'db', 'temporal', 'ingest']],
  ['api', ['domain', 'platform', 'db', 'temporal', 'ingest', 'dashboard']],
  ['cli', ['domain', 'platform', 'db', 'temporal', 'ingest', 'dashboard']],
];
const TYPE_ONLY_EXCEPTIONS = new Set(['workflows -> activities']);

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
  /** `import('…')`: loaded when the code runs there, not when the importing module loads. */
  dynamic?: boolean;
}

/** The relative imports of one file: static, re-exports and dynamic `import('…')` with a literal. */
function importsOf(file: string): Edge[] {
  return allImportsOf(file).filter((edge) => !edge.package);
}

/** The imports of one file, its packages' (`to` the specifier, `package` true) among them. */
function allImportsOf(file: string): Array<Edge & { package: boolean }> {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const edges: Array<Edge & { package: boolean }> = [];
  const visit = (node: ts.Node) => {
    let specifier: string | undefined;
    let typeOnly = false;
    let dynamic = false;
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      specifier = node.moduleSpecifier.text;
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      typeOnly = Boolean(
        clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            bindings &&
            ts.isNamedImports(bindings) &&
            bindings.elements.length > 0 &&
            bindings.elements.every((e) => e.isTypeOnly))),
      );
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specifier = node.moduleSpecifier.text;
      typeOnly = node.isTypeOnly;
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) specifier = argument.text;
      dynamic = true;
    }
    if (specifier?.startsWith('.')) {
      const resolved = path.resolve(path.dirname(path.join(ROOT, file)), specifier.replace(/\.js$/, '.ts'));
      edges.push({ from: file, to: path.relative(ROOT, resolved), typeOnly, dynamic, package: false });
    } else if (specifier && !specifier.startsWith('node:')) edges.push({ from: file, to: specifier, typeOnly, dynamic, package: true });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** Every file reachable from the entry points, with its imports. */
function walk(entries: string[]): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (graph.has(file)) continue;
    if (!existsSync(path.join(ROOT, file))) throw new Error(`${file} is imported but does not exist`);
    const edges = importsOf(file);
    graph.set(file, edges);
    queue.push(...edges.map((edge) => edge.to));
  }
  return graph;
}

/** The cycles of the graph: its strongly connected components of more than one file, or a file importing itself (Tarjan). */
function cycles(graph: Map<string, Edge[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lowlinks = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (file: string) => {
    indices.set(file, index);
    lowlinks.set(file, index);
    index += 1;
    stack.push(file);
    onStack.add(file);
    for (const { to } of graph.get(file) ?? []) {
      if (!indices.has(to)) {
        connect(to);
        lowlinks.set(file, Math.min(lowlinks.get(file)!, lowlinks.get(to)!));
      } else if (onStack.has(to)) lowlinks.set(file, Math.min(lowlinks.get(file)!, indices.get(to)!));
    }
    if (lowlinks.get(file) === indices.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || graph.get(file)!.some((edge) => edge.to === file)) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!indices.has(file)) connect(file);
  return found;
}

const folderOf = (file: string) => file.split('/')[0];
const graph = walk(ENTRY_POINTS);
const edges = [...graph.values()].flat();

describe('the import graph of the product, from its entry points', () => {
  it('walks the whole product: the API, the worker and its activities and workflows, the migrations, the admin CLI', () => {
    const folders = new Set([...graph.keys()].map(folderOf));
    expect([...folders].sort()).toEqual(LAYERS.map(([folder]) => folder).sort());
  });

  it('never reaches devtools/, test/ or bench/ (the development engines and what builds and tests the product)', () => {
    const outside = [...graph.keys()].filter((file) => ['devtools', 'test', 'bench'].includes(folderOf(file)));
    expect(outside).toEqual([]);
  });

  it('lists each layer’s imports among the layers before it only, so the table itself never points back up', () => {
    LAYERS.forEach(([folder, imports], position) => {
      const earlier = LAYERS.slice(0, position).map(([name]) => name);
      expect({ folder, later: imports.filter((name) => !earlier.includes(name)) }).toEqual({ folder, later: [] });
    });
  });

  it('has no import that runs back up between layers', () => {
    const allowed = new Map(LAYERS);
    const upward = edges
      .filter(({ from, to, typeOnly }) => {
        const [a, b] = [folderOf(from), folderOf(to)];
        if (a === b || allowed.get(a)?.includes(b)) return false;
        return !(typeOnly && TYPE_ONLY_EXCEPTIONS.has(`${a} -> ${b}`));
      })
      .map(({ from, to, typeOnly }) => `${from} -> ${to}${typeOnly ? ' (import type)' : ''}`);
    expect(upward).toEqual([]);
  });

  it('has no import cycle through imports that run', () => {
    const running = new Map([...graph].map(([file, imports]) => [file, imports.filter((edge) => !edge.typeOnly)]));
    expect(cycles(running)).toEqual([]);
  });

  // eslint.config.js's local/no-import-cycle checks the same per file (devtools/eslint-import-cycles.js).
  it('has no import cycle, type-only imports included', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle and an upward import when there is one (the walker itself works)', () => {
    const sample = new Map<string, Edge[]>([
      ['db/a.ts', [{ from: 'db/a.ts', to: 'db/b.ts', typeOnly: true }]],
      ['db/b.ts', [{ from: 'db/b.ts', to: 'db/a.ts', typeOnly: false }]],
      ['domain/c.ts', []],
    ]);
    expect(cycles(sample)).toEqual([['db/a.ts', 'db/b.ts']]);
    expect(importsOf('devtools/temporal-dev-server.ts').map((edge) => edge.to)).toContain('temporal/search-attributes.ts');
  });
});

describe('what the operator CLI loads to start', () => {
  /** The packages `entry` loads before it runs a line: its static imports that run, through our own modules. */
  function packagesLoadedBy(entry: string): Set<string> {
    const packages = new Set<string>();
    const seen = new Set<string>();
    const queue = [entry];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const edge of allImportsOf(file).filter((e) => !e.typeOnly && !e.dynamic)) {
        if (edge.package) packages.add(edge.to);
        else queue.push(edge.to);
      }
    }
    return packages;
  }

  // The Temporal SDK was about a tenth of a command's start (0.1 of 1 s): most commands need only
  // the database, and the ones that talk to Temporal load it when they run (cli/admin/context.ts
  // connectTemporal).
  it('loads no Temporal SDK package at start-up, though some commands use it', () => {
    const temporal = (name: string) => name.startsWith('@temporalio/');
    expect([...packagesLoadedBy('cli/admin.ts')].filter(temporal)).toEqual([]);
    const everything = [...walk(['cli/admin.ts']).keys()].flatMap((file) => allImportsOf(file));
    expect(everything.some((edge) => edge.package && temporal(edge.to) && !edge.typeOnly)).toBe(true);
  });
});
