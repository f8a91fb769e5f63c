// Where the worker's JavaScript time goes, from its V8 CPU profiles (`node --cpu-prof`, one file per
// thread: the main thread runs activities and the SDK's bridge to its Rust core, the workflow
// thread(s) the bundled workflow code in a vm context). Grouped by layer, in µs per carrier event.
// The Rust core's own threads (gRPC, the state machines) are not in a V8 profile: they are the
// difference between the process's CPU (side.ts) and the profiles' busy time.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Packages that run only while the worker starts: tsx's compilation, webpack's bundling of the workflows. */
const START_UP =
  /^(tsx|esbuild|get-tsconfig|webpack|webpack-sources|enhanced-resolve|terser|terser-webpack-plugin|acorn|acorn-import-phases|@webassemblyjs\/.*|@swc\/.*|swc-loader|source-map|source-map-support|schema-utils|ajv|tapable|watchpack|graceful-fs|neo-async|loader-runner|browserslist|es-module-lexer|memfs|unionfs)$/;
const JSON_FUNCTIONS = new Set(['parse', 'stringify', 'JSONParse', 'JSONStringify']);

function layer({ url, functionName }: ProfileNode['callFrame']): string {
  if (!url) {
    if (['(idle)', '(program)', '(garbage collector)', '(root)'].includes(functionName)) return functionName;
    if (JSON_FUNCTIONS.has(functionName)) return 'JSON (native)';
    return `native: ${functionName || '(anonymous)'}`;
  }
  if (/workflow-bundle|workflows?[-_]bundle|\.temporal|webpack/.test(url) && !url.includes('node_modules'))
    return 'workflow code in the vm (bundle)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) {
    if (pkg === '@temporalio/proto' || pkg === 'protobufjs' || pkg.startsWith('@protobufjs')) return 'protobuf';
    if (pkg === '@temporalio/common' && /converter|payload/.test(url)) return 'SDK: payload conversion (JSON)';
    if (pkg.startsWith('@temporalio/')) return `SDK: ${pkg.slice('@temporalio/'.length)}`;
    if (pkg.startsWith('pg') || pkg === 'postgres-array' || pkg === 'postgres-date') return 'pg';
    if (/^(pino|sonic-boom|thread-stream|safe-stable-stringify|quick-format-unescaped)$/.test(pkg)) return 'pino (logs)';
    if (START_UP.test(pkg)) return 'start-up (tsx, workflow bundling)';
    if (pkg.startsWith('@opentelemetry') || pkg === 'prom-client') return 'metrics and tracing';
    return pkg;
  }
  const ours = /\/((?:activities|db|domain|platform|workflows|worker|temporal)\/[^/]+)$/.exec(url)?.[1];
  if (ours) return `ours: ${ours.split('/')[0]}/`;
  if (url.startsWith('node:vm') || url.includes('internal/vm')) return 'node: vm';
  if (/^node:internal\/(modules|bootstrap|source_map)/.test(url)) return 'start-up (module loading)';
  if (url.startsWith('node:'))
    return `node: ${
      url
        .slice(5)
        .replace(/^internal\//, '')
        .split('/')[0]
    }`;
  return url.replace(/^.*\//, '');
}

/** µs per layer over every profile, idle left out. */
export function layersOf(files: string[]): Map<string, number> {
  const byLayer = new Map<string, number>();
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    profile.samples.forEach((id, i) => {
      const name = layer(nodes.get(id)!.callFrame);
      if (name === '(idle)') return;
      byLayer.set(name, (byLayer.get(name) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
    });
  }
  return byLayer;
}

/** A markdown table of the layers of each side, in µs per event (`events`: the events the worker handled). */
export function profileTable(sides: Array<{ label: string; files: string[]; events: number }>, top = 18): string[] {
  const layers = sides.map((side) => layersOf(side.files));
  const totals = layers.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  const names = [...new Set(layers.flatMap((m) => [...m.keys()]))].sort(
    (a, b) => Math.max(...layers.map((m) => m.get(b) ?? 0)) - Math.max(...layers.map((m) => m.get(a) ?? 0)),
  );
  const lines = [
    `| layer | ${sides.map((s) => `${s.label} µs/event`).join(' | ')} |`,
    `| --- | ${sides.map(() => '---:').join(' | ')} |`,
    `| **busy (all threads' JavaScript, start-up included)** | ${totals.map((t, i) => `**${Math.round(t / sides[i].events)}**`).join(' | ')} |`,
  ];
  for (const name of names.slice(0, top))
    lines.push(`| ${name} | ${layers.map((m, i) => Math.round((m.get(name) ?? 0) / sides[i].events)).join(' | ')} |`);
  return lines;
}
