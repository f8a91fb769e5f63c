// Finds the time-skipping Temporal test server used by workflow tests: TEMPORAL_TEST_SERVER_PATH,
// else a wrapper script around io.temporal:temporal-test-server resolved from Maven Central into
// the tool cache. The wrapper passes the port only (time skipping is driven by the SDK; the
// server's own --enable-time-skipping flag makes every workflow time out at once).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { isExecutable, MissingComponentError, onPath, run, toolCacheDir } from './tool-cache.js';

const TEST_SERVER_VERSION = '1.32.1';
const SLF4J_VERSION = '2.0.17';

const POM = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.card-delivery</groupId>
  <artifactId>temporal-test-server-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>${TEST_SERVER_VERSION}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>${SLF4J_VERSION}</version></dependency>
  </dependencies>
</project>
`;

export function resolveTestServer(logger?: Logger): string {
  const explicit = process.env.TEMPORAL_TEST_SERVER_PATH;
  if (explicit) {
    if (!isExecutable(explicit)) throw new MissingComponentError(`TEMPORAL_TEST_SERVER_PATH=${explicit} is not executable`);
    logger?.info({ path: explicit, source: 'TEMPORAL_TEST_SERVER_PATH' }, 'using Temporal test server');
    return explicit;
  }
  const dir = toolCacheDir('temporal-test-server', TEST_SERVER_VERSION);
  const wrapper = path.join(dir, 'temporal-test-server');
  if (isExecutable(wrapper) && classpathStillThere(path.join(dir, 'classpath.txt'))) {
    logger?.info({ path: wrapper, source: 'cache' }, 'using Temporal test server');
    return wrapper;
  }
  const java = onPath('java');
  const mvn = onPath('mvn');
  if (!java || !mvn) {
    throw new MissingComponentError(
      'The Temporal time-skipping test server needs Java 17+ and Maven (to fetch io.temporal:temporal-test-server), ' +
        'or set TEMPORAL_TEST_SERVER_PATH to an executable that starts it on the port given as its only argument.',
    );
  }
  logger?.info({ version: TEST_SERVER_VERSION }, 'resolving io.temporal:temporal-test-server with Maven into the tool cache');
  writeFileSync(path.join(dir, 'pom.xml'), POM);
  const classpathFile = path.join(dir, 'classpath.txt');
  const resolved = run(mvn, ['-q', '-B', 'dependency:build-classpath', `-Dmdep.outputFile=${classpathFile}`], {
    cwd: dir,
    timeoutMs: 10 * 60_000,
  });
  if (!resolved.ok || !existsSync(classpathFile)) {
    throw new MissingComponentError(`mvn dependency:build-classpath failed for temporal-test-server:\n${resolved.output.slice(-1500)}`);
  }
  // Single-quoted: the tool cache's path (under $HOME) may hold quotes, `$` or backquotes.
  const script = `#!/bin/sh\n# Starts the Temporal time-skipping test server on the port given as the only argument.\nexec ${shellQuote(java)} -cp "$(cat ${shellQuote(classpathFile)})" io.temporal.testserver.TestServer "$@"\n`;
  writeFileSync(`${wrapper}.partial`, script, { mode: 0o755 });
  renameSync(`${wrapper}.partial`, wrapper);
  logger?.info({ path: wrapper, source: 'maven' }, 'using Temporal test server');
  return wrapper;
}

function classpathStillThere(classpathFile: string): boolean {
  if (!existsSync(classpathFile)) return false;
  return readFileSync(classpathFile, 'utf8')
    .trim()
    .split(path.delimiter)
    .every((jar) => existsSync(jar));
}

/** `value` as one sh word, whatever it holds. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
