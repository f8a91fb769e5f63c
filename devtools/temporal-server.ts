// The production Temporal engine run for real on this machine (docs/operations.md "The
// production engine"): not the dev server, but
// go.temporal.io/server v1.32.2 built from source into the tool cache, with its schema on a Postgres
// we are given, as one cluster of N server processes on one host. Used by the test of the production
// topology (test/e2e/production-topology.test.ts) and by benchmarks; the service itself only ever
// reads TEMPORAL_ADDRESS.
//
//   const cluster = await startTemporalCluster({
//     postgres: { host: '127.0.0.1', port, user, password }, // a superuser: it creates the databases
//     members: 2,                   // server processes, each with all four roles (frontend, history, matching, worker)
//     dataDir: '/tmp/x',            // one folder per member: its config and server.log
//     namespace: 'default',         // created, with the service's search attributes
//   });
//   cluster.address                 // member 0's frontend, 127.0.0.1:<port> (each member has its own .address)
//   await cluster.members[1].kill('SIGKILL');
//   await cluster.stop();
//
// The binaries and the databases' schema: devtools/temporal-server-binaries.ts (built once into the
// tool cache with `go install`). Each member's config is the module's own development-postgres12.yaml
// with our Postgres and ports.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import { parse, stringify } from 'yaml';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes.js';
import { SERVER_DYNAMIC_CONFIG } from './temporal-server-settings.js';
import { resolveTemporalCli } from './temporal-cli.js';
import {
  exec,
  resolveTemporalServer,
  setupTemporalDatabases,
  type PostgresEndpoint,
  type TemporalServerBinaries,
} from './temporal-server-binaries.js';
import { MissingComponentError } from './tool-cache.js';

export {
  resolveTemporalServer,
  setupTemporalDatabases,
  TEMPORAL_SERVER_VERSION,
  type PostgresEndpoint,
  type TemporalServerBinaries,
} from './temporal-server-binaries.js';

export interface TemporalClusterOptions {
  postgres: PostgresEndpoint;
  /** Server processes forming the cluster (default 1). */
  members?: number;
  /** Each member's root folder (config/, server.log) goes under it. */
  dataDir: string;
  /** Registered with the service's search attributes (default 'default'). */
  namespace?: string;
  /** Temporal's two databases (default temporal and temporal_visibility); created when missing. */
  databases?: { main: string; visibility: string };
  /** Fixed for the life of the databases (default 4). */
  numHistoryShards?: number;
  /** Connections per role and member to the main store (default 10; 4 roles per member). */
  maxConns?: number;
  /** Extra dynamic config, key → value (e.g. { 'history.persistenceMaxQPS': 9000 }). */
  dynamicConfig?: Record<string, unknown>;
  logger?: Logger;
}

export interface TemporalServerMember {
  index: number;
  /** Its frontend's gRPC address, 127.0.0.1:<port>. */
  address: string;
  /** Its Prometheus endpoint. */
  metricsUrl: string;
  pid: number;
  /** Where its stdout and stderr go. */
  logFile: string;
  /** Sends `signal` and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Settles when the process exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface TemporalCluster {
  /** Member 0's frontend. */
  address: string;
  namespace: string;
  members: TemporalServerMember[];
  /** SIGTERM to every member still running (SIGKILL after 15 s); resolves once all have exited. */
  stop(): Promise<void>;
}

/** Sets up the databases, starts the members (member 0 first), registers the namespace and search attributes. */
export async function startTemporalCluster(options: TemporalClusterOptions): Promise<TemporalCluster> {
  const binaries = await resolveTemporalServer(options.logger);
  const databases = options.databases ?? { main: 'temporal', visibility: 'temporal_visibility' };
  const namespace = options.namespace ?? 'default';
  await setupTemporalDatabases(binaries, options.postgres, databases);
  const members: TemporalServerMember[] = [];
  const stop = async () => {
    await Promise.all(
      members.map(async (member) => {
        const timer = setTimeout(() => void member.kill('SIGKILL'), 15_000);
        await member.kill('SIGTERM');
        clearTimeout(timer);
      }),
    );
  };
  try {
    members.push(await startMemberRetrying(binaries, options, databases, 0));
    const others = Array.from({ length: (options.members ?? 1) - 1 }, (_, i) => startMemberRetrying(binaries, options, databases, i + 1));
    const settled = await Promise.allSettled(others);
    for (const result of settled) if (result.status === 'fulfilled') members.push(result.value);
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    await registerNamespace(members, namespace, options.logger);
  } catch (error) {
    await stop();
    throw error;
  }
  options.logger?.info({ members: members.map((m) => m.address), namespace }, 'Temporal cluster started');
  return { address: members[0].address, namespace, members, stop };
}

/**
 * A free port below 32768: the cluster_membership table keeps a member's port as a smallint, so the
 * kernel's ephemeral ports (32768 and up) are refused there (`value "33123" is out of range for type
 * smallint`). Picked at random in 10000–32767 and tried by binding it.
 */
export async function freeMemberPort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 22_768);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** A port picked as free can be taken before the server binds it: such a start is tried again on fresh ports. */
async function startMemberRetrying(
  binaries: TemporalServerBinaries,
  options: TemporalClusterOptions,
  databases: { main: string; visibility: string },
  index: number,
): Promise<TemporalServerMember> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startMember(binaries, options, databases, index);
    } catch (error) {
      if (attempt >= 3 || !/exited during start-up/.test(String(error))) throw error;
      options.logger?.warn({ index, attempt, err: error }, 'a Temporal server member exited during start-up; trying again on other ports');
    }
  }
}

async function startMember(
  binaries: TemporalServerBinaries,
  options: TemporalClusterOptions,
  databases: { main: string; visibility: string },
  index: number,
): Promise<TemporalServerMember> {
  const root = path.join(path.resolve(options.dataDir), `member-${index}`);
  mkdirSync(path.join(root, 'config', 'dynamicconfig'), { recursive: true });
  const ports = {
    frontend: await freeMemberPort(),
    frontendMembership: await freeMemberPort(),
    http: await freeMemberPort(),
    history: await freeMemberPort(),
    historyMembership: await freeMemberPort(),
    matching: await freeMemberPort(),
    matchingMembership: await freeMemberPort(),
    worker: await freeMemberPort(),
    workerMembership: await freeMemberPort(),
    metrics: await freeMemberPort(),
  };
  const dynamicConfigFile = path.join(root, 'config', 'dynamicconfig', 'development-sql.yaml');
  writeFileSync(dynamicConfigFile, stringify(dynamicConfig(binaries, ports.http, options.dynamicConfig)));
  writeFileSync(
    path.join(root, 'config', 'development.yaml'),
    stringify(serverConfig(binaries, options, databases, ports, dynamicConfigFile)),
  );

  const logFile = path.join(root, 'server.log');
  const out = openSync(logFile, 'a');
  // Its own process group, like the dev server; the log in a file, so that it never fills a pipe.
  const child: ChildProcess = spawn(binaries.server, ['--root', root, '--config', 'config', '--env', 'development', 'start'], {
    cwd: root,
    stdio: ['ignore', out, out],
    detached: true,
  });
  closeSync(out);
  let exitedAt: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
    exitedAt = { code: null, signal: null };
  });
  // Never outlive the process that started it, whatever way that process ends short of SIGKILL.
  const onProcessExit = () => {
    if (!exitedAt) child.kill('SIGKILL');
  };
  process.once('exit', onProcessExit);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      exitedAt = { code, signal };
      process.removeListener('exit', onProcessExit);
      resolve(exitedAt);
    }),
  );
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (exitedAt) return;
    child.kill(signal);
    await exited;
  };
  const logTail = () => {
    try {
      return readFileSync(logFile, 'utf8').slice(-3000);
    } catch {
      return '';
    }
  };

  const address = `127.0.0.1:${ports.frontend}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exitedAt) {
      if (spawnError) throw new MissingComponentError(`the Temporal server could not be started: ${spawnError.message}`);
      throw new Error(`Temporal server member ${index} exited during start-up (${JSON.stringify(exitedAt)}):\n${logTail()}`);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
      } finally {
        await connection.close();
      }
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        await kill('SIGKILL');
        throw new Error(`Temporal server member ${index} did not answer on ${address} within 120 s\n${logTail()}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  options.logger?.info({ index, address, pid: child.pid, logFile }, 'Temporal server member started');
  return { index, address, metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`, pid: child.pid!, logFile, kill, exited };
}

type Ports = Record<
  | 'frontend'
  | 'frontendMembership'
  | 'http'
  | 'history'
  | 'historyMembership'
  | 'matching'
  | 'matchingMembership'
  | 'worker'
  | 'workerMembership'
  | 'metrics',
  number
>;

/**
 * The module's config/development-postgres12.yaml with our Postgres, databases and ports: every
 * member has ports of its own and the same databases, and members find one another through the
 * cluster_membership table, so they form one cluster.
 */
function serverConfig(
  binaries: TemporalServerBinaries,
  options: TemporalClusterOptions,
  databases: { main: string; visibility: string },
  ports: Ports,
  dynamicConfigFile: string,
) {
  const config = parse(readFileSync(path.join(binaries.moduleDir, 'config', 'development-postgres12.yaml'), 'utf8'));
  config.log = { stdout: true, level: 'warn' };
  config.persistence.numHistoryShards = options.numHistoryShards ?? 4;
  const { postgres } = options;
  for (const [name, store] of Object.entries(config.persistence.datastores) as Array<[string, { sql: Record<string, unknown> }]>) {
    const visibility = name === config.persistence.visibilityStore;
    Object.assign(store.sql, {
      databaseName: visibility ? databases.visibility : databases.main,
      connectAddr: `${postgres.host}:${postgres.port}`,
      user: postgres.user,
      password: postgres.password,
      ...(visibility ? {} : { maxConns: options.maxConns ?? 10, maxIdleConns: options.maxConns ?? 10 }),
    });
  }
  config.global.membership.broadcastAddress = '127.0.0.1';
  config.global.pprof.port = 0; // off: one fixed port would clash between members
  config.global.metrics.prometheus.listenAddress = `127.0.0.1:${ports.metrics}`;
  const rpc = (grpcPort: number, membershipPort: number, extra = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  config.services = {
    frontend: rpc(ports.frontend, ports.frontendMembership, { httpPort: ports.http }),
    history: rpc(ports.history, ports.historyMembership),
    matching: rpc(ports.matching, ports.matchingMembership),
    worker: rpc(ports.worker, ports.workerMembership),
  };
  config.clusterMetadata.clusterInformation[config.clusterMetadata.currentClusterName].rpcAddress = `127.0.0.1:${ports.frontend}`;
  config.dynamicConfigClient.filepath = dynamicConfigFile;
  return config;
}

/**
 * The module's config/dynamicconfig/development-sql.yaml, its callback address on this member's HTTP
 * port, the service's SERVER_DYNAMIC_CONFIG (devtools/temporal-server-settings.ts), plus `extra`.
 */
function dynamicConfig(binaries: TemporalServerBinaries, httpPort: number, extra: Record<string, unknown> = {}) {
  const text = readFileSync(path.join(binaries.moduleDir, 'config', 'dynamicconfig', 'development-sql.yaml'), 'utf8');
  const config = parse(text.replaceAll('localhost:7243', `127.0.0.1:${httpPort}`)) as Record<string, unknown>;
  for (const [key, value] of Object.entries({ ...SERVER_DYNAMIC_CONFIG, ...extra })) config[key] = [{ value, constraints: {} }];
  return config;
}

/**
 * The namespace and the search attributes the dispatch workflow upserts, with the Temporal CLI
 * (as deploy/temporal/setup-namespace.sh does), then waits until every member's frontend knows both.
 */
async function registerNamespace(members: TemporalServerMember[], namespace: string, logger?: Logger): Promise<void> {
  const cli = await resolveTemporalCli(logger);
  const address = members[0].address;
  const created = await exec(cli, [
    'operator',
    'namespace',
    'create',
    '--namespace',
    namespace,
    '--retention',
    '720h',
    '--address',
    address,
  ]);
  if (created.code !== 0 && !/already (exists|registered)/i.test(created.output))
    throw new Error(`temporal operator namespace create ${namespace} failed:\n${created.output.slice(-2000)}`);
  const query = Object.keys(SEARCH_ATTRIBUTES)
    .map((name) => `${name} = 'probe'`)
    .join(' AND ');
  const deadline = Date.now() + 120_000;
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) {
    for (;;) {
      const result = await exec(cli, [
        'operator',
        'search-attribute',
        'create',
        '--namespace',
        namespace,
        '--name',
        name,
        '--type',
        type,
        '--address',
        address,
      ]);
      if (result.code === 0 || /already exists/i.test(result.output)) break;
      // A namespace just created takes a moment to be visible to every role.
      if (Date.now() > deadline) throw new Error(`creating search attribute ${name} failed:\n${result.output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  // Listing with a filter on every attribute succeeds only where the namespace and its attributes are known.
  for (const member of members) {
    const connection = await Connection.connect({ address: member.address });
    try {
      for (;;) {
        try {
          await connection.workflowService.listWorkflowExecutions({ namespace, query, pageSize: 1 });
          break;
        } catch (error) {
          if (Date.now() > deadline)
            throw new Error(`member ${member.index} does not know namespace ${namespace} and its search attributes`, { cause: error });
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    } finally {
      await connection.close();
    }
  }
}
