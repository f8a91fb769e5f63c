// The tools test/deploy/helm.test.ts needs to render the Helm chart and check every object against
// the Kubernetes API schemas offline, each fetched once into the tool cache (as devtools/temporal-cli.ts
// does for the Temporal CLI), pinned by version, through package registries only:
//   helm           `go install helm.sh/helm/v3/cmd/helm@v3.18.6` (Go module proxy)
//   kubeconform    `go install github.com/yannh/kubeconform/cmd/kubeconform@v0.7.0`
//   JSON schemas   Kubernetes 1.33's strict JSON schemas from PyPI's kubernetes-validate wheel
//                  (sha256 pinned), their $refs made local so that nothing is fetched at validation
//   KEDA           the ScaledObject validator of npm's @kubernetes-models/keda (generated from
//                  KEDA's Go API types), installed into the cache with npm, outside package.json
// A fresh machine builds all four in parallel (deploy/README.md says how long it took); later runs
// find them in the cache. Every step writes to a temporary name and renames it into place, so
// concurrent runs see a whole tool or none.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isExecutable, MissingComponentError, onPath, sha256File, toolCacheDir } from '../../devtools/tool-cache.js';

export const HELM_VERSION = 'v3.18.6';
export const KUBECONFORM_VERSION = 'v0.7.0';
/** The Kubernetes version the chart is rendered for and validated against. */
export const KUBERNETES_VERSION = '1.33.0';
const SCHEMA_WHEEL_VERSION = '1.37.0';
const SCHEMA_WHEEL = `kubernetes_validate-${SCHEMA_WHEEL_VERSION}-py3-none-any.whl`;
const SCHEMA_WHEEL_SHA256 = '85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9';
const KEDA_MODELS_VERSION = '2.0.0';

export interface KubeTools {
  helm: string;
  kubeconform: string;
  /** kubeconform's -schema-location for the local schemas. */
  schemaLocation: string;
  /** Folder whose node_modules holds @kubernetes-models/keda. */
  kedaModels: string;
}

export async function resolveKubeTools(log: (line: string) => void = () => {}): Promise<KubeTools> {
  const [helm, kubeconform, schemaDir, kedaModels] = await Promise.all([
    goInstalled('helm', 'helm.sh/helm/v3/cmd/helm', HELM_VERSION, log),
    goInstalled('kubeconform', 'github.com/yannh/kubeconform/cmd/kubeconform', KUBECONFORM_VERSION, log),
    kubernetesSchemas(log),
    kedaValidator(log),
  ]);
  return { helm, kubeconform, schemaLocation: path.join(schemaDir, '{{.ResourceKind}}{{.KindSuffix}}.json'), kedaModels };
}

async function goInstalled(name: string, pkg: string, version: string, log: (line: string) => void): Promise<string> {
  const dir = toolCacheDir(name, version);
  const target = path.join(dir, name);
  if (isExecutable(target)) return target;
  const go = onPath('go');
  if (!go) throw new MissingComponentError(`${name} ${version} is built with Go (go install ${pkg}@${version}): install Go 1.24+`);
  const gobin = mkdtempSync(path.join(dir, '.build-'));
  try {
    log(`building ${name} ${version} with go install into ${dir}`);
    // At the lowest CPU priority: the other tests of the suite run beside this build on a small machine.
    const nice = onPath('nice');
    const [command, args] = nice ? [nice, ['-n', '19', go]] : [go, []];
    await exec(command, [...args, 'install', `${pkg}@${version}`], { env: { ...process.env, GOBIN: gobin } });
    renameSync(path.join(gobin, name), target);
    return target;
  } finally {
    rmSync(gobin, { recursive: true, force: true });
  }
}

async function kubernetesSchemas(log: (line: string) => void): Promise<string> {
  const dir = path.join(
    toolCacheDir('kubernetes-json-schema', `kubernetes-validate-${SCHEMA_WHEEL_VERSION}`),
    `v${KUBERNETES_VERSION}-strict`,
  );
  if (existsSync(path.join(dir, '_definitions.json'))) return dir;
  const python = onPath('python3') ?? onPath('python');
  if (!python)
    throw new MissingComponentError('python3 with pip is needed to fetch the Kubernetes JSON schemas (PyPI kubernetes-validate)');
  const work = mkdtempSync(path.join(tmpdir(), 'kubernetes-validate-'));
  try {
    log(`fetching kubernetes-validate==${SCHEMA_WHEEL_VERSION} from PyPI for the Kubernetes ${KUBERNETES_VERSION} schemas`);
    await exec(python, [
      '-m',
      'pip',
      'download',
      '--no-deps',
      '--only-binary=:all:',
      '-d',
      work,
      `kubernetes-validate==${SCHEMA_WHEEL_VERSION}`,
    ]);
    const wheel = path.join(work, SCHEMA_WHEEL);
    if (!existsSync(wheel)) throw new MissingComponentError(`pip did not download ${SCHEMA_WHEEL}: ${readdirSync(work).join(', ')}`);
    const digest = await sha256File(wheel);
    if (digest !== SCHEMA_WHEEL_SHA256)
      throw new MissingComponentError(`${SCHEMA_WHEEL}: sha256 ${digest} is not the pinned ${SCHEMA_WHEEL_SHA256}`);
    // The wheel's schemas name themselves https://kubernetes.io/api/… and point at one another by
    // absolute URL: dropping $id and making the $refs relative keeps kubeconform on local files.
    const staged = path.join(work, 'schemas');
    await exec(python, [
      '-c',
      EXTRACT_SCHEMAS,
      wheel,
      `kubernetes_validate/kubernetes-json-schema/v${KUBERNETES_VERSION}-local-strict/`,
      staged,
    ]);
    try {
      renameSync(staged, dir);
    } catch (error) {
      if (!existsSync(path.join(dir, '_definitions.json'))) throw error; // else another run got there first
    }
    return dir;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const EXTRACT_SCHEMAS = `
import json, os, sys, zipfile
wheel, prefix, out = sys.argv[1:4]
os.makedirs(out)
archive = zipfile.ZipFile(wheel)
count = 0
for name in archive.namelist():
    if name.startswith(prefix) and name.endswith('.json'):
        doc = json.loads(archive.read(name))
        doc.pop('$id', None)
        text = json.dumps(doc).replace('"/api/_definitions.json#', '"_definitions.json#')
        with open(os.path.join(out, name[len(prefix):]), 'w') as f:
            f.write(text)
        count += 1
if count < 100:
    sys.exit('only %d schemas under %s' % (count, prefix))
`;

async function kedaValidator(log: (line: string) => void): Promise<string> {
  const dir = toolCacheDir('keda-models', KEDA_MODELS_VERSION);
  const marker = path.join(dir, 'installed');
  if (existsSync(marker)) return dir;
  const npm = onPath('npm');
  if (!npm) throw new MissingComponentError('npm is needed to fetch @kubernetes-models/keda');
  log(`installing @kubernetes-models/keda@${KEDA_MODELS_VERSION} from npm into ${dir}`);
  await exec(npm, [
    'install',
    '--prefix',
    dir,
    '--no-save',
    '--no-package-lock',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    `@kubernetes-models/keda@${KEDA_MODELS_VERSION}`,
  ]);
  writeFileSync(marker, `@kubernetes-models/keda@${KEDA_MODELS_VERSION}\n`);
  return dir;
}

/** Runs a command to completion without blocking the event loop; rejects with its output's tail. */
export function exec(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(command, args, options).then((result) => {
    if (result.code !== 0) {
      throw new MissingComponentError(
        `${command} ${args.join(' ')} exited ${result.code}:\n${(result.stdout + result.stderr).slice(-2000)}`,
      );
    }
    return result;
  });
}

/** Runs a command to completion and returns its exit code and output, whatever the code. */
export function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20 * 60_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** One rendered object's verdict. */
export interface ObjectVerdict {
  kind: string;
  name: string;
  valid: boolean;
  /** The validator's reason when invalid. */
  message?: string;
  /** Which schema judged it. */
  checkedBy: 'kubernetes' | 'keda';
}

interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
}

/**
 * Checks every object against its schema: the Kubernetes ones with kubeconform -strict (unknown
 * fields refused; an object without a schema is an error, never skipped), KEDA's ScaledObject with
 * KEDA's validator. Returns one verdict per object, in the order given.
 */
export async function validateObjects(tools: KubeTools, objects: RenderedObject[]): Promise<ObjectVerdict[]> {
  const isKeda = (o: RenderedObject) => o.apiVersion.startsWith('keda.sh/');
  const core = objects.filter((o) => !isKeda(o));
  const keda = objects.filter(isKeda);
  const [coreVerdicts, kedaVerdicts] = await Promise.all([kubeconformVerdicts(tools, core), kedaVerdictsOf(tools, keda)]);
  return objects.map((o) => (isKeda(o) ? kedaVerdicts[keda.indexOf(o)] : coreVerdicts[core.indexOf(o)]));
}

async function kubeconformVerdicts(tools: KubeTools, objects: RenderedObject[]): Promise<ObjectVerdict[]> {
  if (objects.length === 0) return [];
  const input = objects.map((o) => JSON.stringify(o)).join('\n---\n');
  const result = await run(tools.kubeconform, ['-strict', '-output', 'json', '-verbose', '-schema-location', tools.schemaLocation, '-'], {
    input,
  });
  const report = JSON.parse(result.stdout) as { resources: Array<{ kind: string; name: string; status: string; msg: string }> };
  return objects.map((o) => {
    const found = report.resources.find((r) => r.kind === o.kind && r.name === o.metadata.name);
    if (!found)
      return { kind: o.kind, name: o.metadata.name, valid: false, message: 'kubeconform did not report it', checkedBy: 'kubernetes' };
    const valid = found.status === 'statusValid';
    return {
      kind: o.kind,
      name: o.metadata.name,
      valid,
      checkedBy: 'kubernetes',
      ...(valid ? {} : { message: `${found.status}: ${found.msg}` }),
    };
  });
}

// Runs in its own Node process, so that the cached package resolves its own dependencies.
const KEDA_CHECK = `
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const verdicts = JSON.parse(input).map((object) => {
  if (object.kind !== 'ScaledObject') return { valid: false, message: 'no KEDA schema for ' + object.kind };
  try {
    new ScaledObject(object).validate();
    return { valid: true };
  } catch (error) {
    return { valid: false, message: error.message };
  }
});
process.stdout.write(JSON.stringify(verdicts));
`;

async function kedaVerdictsOf(tools: KubeTools, objects: RenderedObject[]): Promise<ObjectVerdict[]> {
  if (objects.length === 0) return [];
  const result = await exec(process.execPath, ['--input-type=module', '-e', KEDA_CHECK], {
    cwd: tools.kedaModels,
    input: JSON.stringify(objects),
  });
  const verdicts = JSON.parse(result.stdout) as Array<{ valid: boolean; message?: string }>;
  return objects.map((o, i) => ({ kind: o.kind, name: o.metadata.name, checkedBy: 'keda', ...verdicts[i] }));
}
