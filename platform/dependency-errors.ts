// A dependency that is not there when a process starts (docs/configuration.md "When a process does
// not start"): the worker needs Temporal to start (it creates its Schedules and checks its
// namespace), `npm run migrate` and `npm start` need the database. Each failure becomes one line
// naming the variable to look at and the reason, worded for an operator: not a driver's stack.
import { StartupError } from './config.js';

/** Network failures, by the code Node and pg give them, in words. */
const UNREACHABLE_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network unreachable',
};

/** The words for a network failure's code (ECONNREFUSED → connection refused); undefined for any other code. */
export function unreachableReason(code: unknown): string | undefined {
  return typeof code === 'string' && Object.hasOwn(UNREACHABLE_CODES, code) ? UNREACHABLE_CODES[code] : undefined;
}

/** A Temporal that answers without TEMPORAL_NAMESPACE, as the worker's and the API's start-up lines word it. */
export const namespaceMissing = (namespace: string, address: string) =>
  `TEMPORAL_NAMESPACE ${namespace} does not exist on Temporal at ${address}`;

/** SQLSTATE classes of a server that answered and refused: 28 (credentials), 3D (no such database), 53 (too many connections). */
const REFUSED_SQLSTATE = /^(28|3D|53)/;

interface DriverError {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
}

/** Where DATABASE_URL points, without its user or password. */
function databaseHost(databaseUrl: string): string {
  try {
    return new URL(databaseUrl).host || 'the local socket';
  } catch {
    return 'DATABASE_URL';
  }
}

/**
 * The database of DATABASE_URL could not be used at start-up: unreachable (refused, no such host,
 * timed out) or refused by the server (credentials, no such database). Anything else: undefined.
 */
export function databaseStartupError(error: unknown, databaseUrl: string): StartupError | undefined {
  const failure = (error ?? {}) as DriverError;
  // pg reports a refused connection to a dual-stack host as an AggregateError of the attempts.
  if (Array.isArray(failure.errors) && failure.errors.length > 0) return databaseStartupError(failure.errors[0], databaseUrl);
  const where = `the database at ${databaseHost(databaseUrl)} (DATABASE_URL)`;
  const unreachable = unreachableReason(failure.code);
  if (unreachable) return new StartupError(`${where} is unreachable: ${unreachable}`);
  if (typeof failure.code === 'string' && REFUSED_SQLSTATE.test(failure.code) && typeof failure.message === 'string') {
    return new StartupError(`${where} refused the connection: ${failure.message.split('\n')[0]}`);
  }
  return undefined;
}

/**
 * The innermost reason of the SDK core's transport error (`… message: "Connection refused" …`,
 * `… error: "failed to lookup address information: …" …`), else its first line.
 */
function transportReason(message: string): string {
  const inner = [...message.matchAll(/(?:message|error): "([^"]+)"/g)].at(-1)?.[1] ?? message.split('\n')[0];
  const reason = inner.length > 200 ? `${inner.slice(0, 200)}…` : inner;
  return reason.charAt(0).toLowerCase() + reason.slice(1);
}

/**
 * Temporal could not be used at start-up: its namespace does not exist, or it does not answer (or
 * refuses the credentials). Errors that are not the SDK's: undefined.
 */
export function temporalStartupError(error: unknown, address: string, namespace: string): StartupError | undefined {
  if (!(error instanceof Error)) return undefined;
  if (!['TransportError', 'ServiceError', 'NamespaceNotFoundError'].includes(error.name)) return undefined;
  if (error.name === 'NamespaceNotFoundError' || /Namespace \S+ (was not found|is not found)/.test(error.message)) {
    return new StartupError(`${namespaceMissing(namespace, address)}: create it or set TEMPORAL_NAMESPACE`);
  }
  return new StartupError(`Temporal at ${address} (TEMPORAL_ADDRESS) is unreachable: ${transportReason(error.message)}`);
}
