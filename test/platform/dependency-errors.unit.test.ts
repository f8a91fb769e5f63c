// platform/dependency-errors.ts: the one line an operator reads when a dependency is not there at
// start-up, for the shapes the drivers give (the entry points themselves: test/e2e/operator-errors.test.ts).
import { describe, expect, it } from '@jest/globals';
import { StartupError } from '../../platform/config.js';
import { databaseStartupError, temporalStartupError } from '../../platform/dependency-errors.js';

const URL_WITH_PASSWORD = 'postgres://cds:hunter2@db.internal:5432/cds';

const named = (name: string, message: string) => Object.assign(new Error(message), { name });

describe('databaseStartupError', () => {
  it('words a refused connection of a dual-stack host (an AggregateError of the attempts) by its first attempt', () => {
    const error = new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })], '');
    expect(databaseStartupError(error, URL_WITH_PASSWORD)?.message).toBe(
      'the database at db.internal:5432 (DATABASE_URL) is unreachable: connection refused',
    );
  });

  it("passes on the server's refusal (credentials) without the URL's password", () => {
    const error = Object.assign(new Error('password authentication failed for user "cds"'), { code: '28P01' });
    const line = databaseStartupError(error, URL_WITH_PASSWORD);
    expect(line).toBeInstanceOf(StartupError);
    expect(line?.message).toBe('the database at db.internal:5432 (DATABASE_URL) refused the connection: password authentication failed for user "cds"'); // prettier-ignore
    expect(line?.message).not.toContain('hunter2');
  });

  it('leaves any other failure (a migration that failed, a bug) to its stack', () => {
    expect(databaseStartupError(Object.assign(new Error('syntax error at or near "CREAT"'), { code: '42601' }), URL_WITH_PASSWORD)).toBeUndefined(); // prettier-ignore
    expect(databaseStartupError(new TypeError('x is undefined'), URL_WITH_PASSWORD)).toBeUndefined();
  });
});

describe('temporalStartupError', () => {
  it("reads the reason inside the SDK core's transport error", () => {
    const error = named('TransportError', 'tonic::transport::Error(Transport, ConnectError(ConnectError("dns error", Custom { kind: Uncategorized, error: "failed to lookup address information: Name or service not known" })))'); // prettier-ignore
    expect(temporalStartupError(error, 'temporal:7233', 'default')?.message).toBe(
      'Temporal at temporal:7233 (TEMPORAL_ADDRESS) is unreachable: failed to lookup address information: Name or service not known',
    );
  });

  it('names TEMPORAL_NAMESPACE when Temporal has no such namespace', () => {
    const error = named('TransportError', 'Namespace cards was not found or otherwise could not be described: Status { code: NotFound }');
    expect(temporalStartupError(error, 'temporal:7233', 'cards')?.message).toBe(
      'TEMPORAL_NAMESPACE cards does not exist on Temporal at temporal:7233: create it or set TEMPORAL_NAMESPACE',
    );
  });

  it("leaves errors that are not the SDK's to their stack", () => {
    expect(temporalStartupError(Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' }), 'temporal:7233', 'default')).toBeUndefined(); // prettier-ignore
  });
});
