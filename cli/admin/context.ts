// What every admin command shares: which database to use (DATABASE_URL, else the running
// `npm start`'s runtime file) and which Temporal, namespace and task queue (TEMPORAL_*, else that
// file's), one connection per invocation, a worker on the task queue for the
// commands that start a workflow, the --json / human output switch, and
// the translation of failures into the one-line reason an operator sees on stderr (docs/admin-cli.md "Operator CLI").
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { z } from 'zod';
import { FIELD_ERRORS, issueProblem } from '../../domain/field-errors.js';
import { issuerErasedAt } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import type { Config } from '../../platform/config.js';
import { temporalConnectionOptions, type TemporalConnectionOptions } from '../../temporal/connection-options.js';
import { unreachableReason } from '../../platform/dependency-errors.js';
import { isRuntimeAlive, readRuntimeFile, RUNTIME_FILE } from '../runtime-file.js';

/** A failure whose message is already what the operator should read. */
export class CliError extends Error {}

export const NO_DATABASE = 'no database: start the service with `npm start` or set DATABASE_URL';
export const NOT_MIGRATED = 'database not migrated: run npm start or npm run migrate';

/** The database the running service uses, or a CliError that says how to get one. */
export function resolveDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.DATABASE_URL?.trim();
  if (fromEnv) {
    if (!z.url().safeParse(fromEnv).success)
      throw new CliError('DATABASE_URL is not a URL (expected postgres://user:password@host:port/database)');
    return fromEnv;
  }
  const runtime = readRuntimeFile(RUNTIME_FILE);
  if (!runtime) throw new CliError(NO_DATABASE);
  if (!isRuntimeAlive(runtime))
    throw new CliError(`${NO_DATABASE} (${RUNTIME_FILE} is left over from process ${runtime.pid}, which is no longer running)`);
  return runtime.databaseUrl;
}

/**
 * Where the running `npm start` serves its dashboard, for links the CLI prints, when this command
 * works on that service's database (no DATABASE_URL) and is not told otherwise (no
 * DASHBOARD_BASE_URL): `npm start` may run on any PORT, which this command's environment does not know.
 */
export function runningDashboardUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.DATABASE_URL?.trim() || env.DASHBOARD_BASE_URL?.trim()) return undefined;
  const runtime = readRuntimeFile(RUNTIME_FILE);
  return runtime && isRuntimeAlive(runtime) ? runtime.dashboardUrl : undefined;
}

/** The running service's Temporal as a command reaches it: the connection, and the namespace and task queue it works in. */
export interface TemporalTarget {
  options: TemporalConnectionOptions;
  namespace: string;
  taskQueue: string;
}

/**
 * How to reach the Temporal of the running service: TEMPORAL_ADDRESS with the configuration's TLS, API
 * key, TEMPORAL_NAMESPACE and TEMPORAL_TASK_QUEUE; else the running `npm start`'s dev server (plain), in
 * the namespace and on the task queue that `npm start` runs with, unless TEMPORAL_NAMESPACE or
 * TEMPORAL_TASK_QUEUE names others (as TEMPORAL_ADDRESS names another Temporal). Not the defaults: after
 * `TEMPORAL_NAMESPACE=cards npm start`, a footprint counted in `default` would prove an erasure false.
 */
export function resolveTemporalConnection(config: Config, env: NodeJS.ProcessEnv = process.env, file = RUNTIME_FILE): TemporalTarget {
  const fromEnv = env.TEMPORAL_ADDRESS?.trim();
  if (fromEnv)
    return {
      options: temporalConnectionOptions(fromEnv, config),
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
    };
  const runtime = readRuntimeFile(file);
  if (!runtime || !isRuntimeAlive(runtime)) throw new CliError('no Temporal: start the service with `npm start` or set TEMPORAL_ADDRESS');
  return {
    options: { address: runtime.temporalAddress },
    namespace: (env.TEMPORAL_NAMESPACE?.trim() ? undefined : runtime.temporalNamespace) ?? config.TEMPORAL_NAMESPACE,
    taskQueue: (env.TEMPORAL_TASK_QUEUE?.trim() ? undefined : runtime.temporalTaskQueue) ?? config.TEMPORAL_TASK_QUEUE,
  };
}

/**
 * A Temporal client of the running service (resolveTemporalConnection), the task queue its worker
 * polls, and how to close it. The SDK is loaded here, when a command needs it, not when the CLI
 * starts: most commands need only the database, and loading it was about a tenth of every command's
 * start (0.1 of 1 s).
 */
export async function connectTemporal(config: Config): Promise<{ temporal: Client; taskQueue: string; close: () => Promise<void> }> {
  const { options, namespace, taskQueue } = resolveTemporalConnection(config);
  const sdk = await import('@temporalio/client');
  const connection = await sdk.Connection.connect(options);
  return { temporal: new sdk.Client({ connection, namespace }), taskQueue, close: () => connection.close() };
}

/**
 * For a command whose work the service's worker does (a workflow it starts on connectTemporal's task
 * queue): a CliError unless a worker polls that queue, before anything is started or recorded.
 * Otherwise the command would wait for ever, or leave its workflow to a queue that nobody polls.
 */
export async function requireWorker(temporal: Client, taskQueue: string): Promise<void> {
  const { workerPolls } = await import('../../temporal/client.js');
  if (await workerPolls(temporal, taskQueue)) return;
  throw new CliError(
    `no worker polls the task queue "${taskQueue}" (namespace ${temporal.options.namespace}): start the worker, or set TEMPORAL_TASK_QUEUE to the service's`,
  );
}

/** Why a command could not add to the issuer: it does not exist, or `issuer erase` erased it. */
export async function issuerRefusal(db: Pool, issuerId: string): Promise<CliError> {
  const erasedAt = await issuerErasedAt(db, issuerId);
  return new CliError(
    erasedAt
      ? `issuer ${issuerId} was erased on ${erasedAt.toISOString()}: it takes no new key, user or endpoint`
      : `unknown issuer: ${issuerId}`,
  );
}

/** Opens one small pool for the command, runs it, and always closes the pool. */
export async function withDatabase<T>(work: (db: Pool) => Promise<T>): Promise<T> {
  const pool = createPool(resolveDatabaseUrl(), { max: 1, applicationName: 'card-delivery-admin' });
  // An idle client's error (the server going away) must not crash the process with a stack trace.
  pool.on('error', () => {});
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/** True when `--json` was given, before or after the command name. */
export function wantsJson(command: Command): boolean {
  return Boolean(command.optsWithGlobals().json);
}

/**
 * Prints the command's result: exactly one JSON document with `--json`, else the human text.
 * Everything else (warnings, progress) goes to stderr so stdout stays parseable.
 */
export function output(command: Command, json: unknown, human: () => string): void {
  process.stdout.write(wantsJson(command) ? `${JSON.stringify(json, null, 2)}\n` : `${human()}\n`);
}

/**
 * A whole-number option in [min, max], written in decimal digits: not `z.coerce.number()`, which
 * reads `abc` as NaN (and says so), a blank value as 0 and `1e1` as 10. One rule whatever is wrong,
 * so the operator reads what to write (as platform/config.ts words a number variable).
 */
export function wholeNumberOption(min: number, max: number) {
  const error = `must be a whole number ${min}–${max}`;
  return z
    .string({ error })
    .regex(/^[0-9]+$/, { error })
    .transform(Number)
    .pipe(z.number().int({ error }).min(min, { error }).max(max, { error }));
}

/** Parses a command's options with a zod schema; a bad value becomes a one-line CliError, worded as the API words it (domain/field-errors.ts). */
export function parseOptions<S extends z.ZodType>(schema: S, options: unknown): z.infer<S> {
  const parsed = schema.safeParse(options, FIELD_ERRORS);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const option = issue.path.length > 0 ? `--${String(issue.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : 'options';
  throw new CliError(`invalid ${option}: ${issueProblem(issue)}`);
}

const PG_UNDEFINED_TABLE = '42P01';

/** The one line an operator reads for any failure: no stack traces, no multi-line driver dumps. */
export function describeFailure(error: unknown): string {
  if (error instanceof CliError) return error.message;
  const failure = error as { code?: string; message?: string; address?: string; port?: number; errors?: unknown[] };
  if (failure.code === PG_UNDEFINED_TABLE) return NOT_MIGRATED;
  if (unreachableReason(failure.code)) {
    const where = failure.address ? ` at ${failure.address}${failure.port ? `:${failure.port}` : ''}` : '';
    return `cannot reach the database${where} (${failure.code}): is the service running?`;
  }
  // pg reports a refused connection to a dual-stack host as an AggregateError of the attempts.
  if (Array.isArray(failure.errors) && failure.errors.length > 0) return describeFailure(failure.errors[0]);
  const message = (failure.message ?? String(error)).split('\n')[0].trim();
  return message || 'unexpected failure';
}

/** Formats a timestamp for JSON output (ISO 8601, UTC) and keeps null as null. */
export function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/** Left-aligned columns separated by two spaces, for human output. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, col) => Math.max(h.length, ...rows.map((row) => row[col].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, col) => cell.padEnd(widths[col]))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
