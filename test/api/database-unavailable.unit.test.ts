// docs/http-contract.md "Common rules": Postgres unreachable answers 503 `service_unavailable`, as
// Temporal unreachable does, not 500. The errors here are the real ones the pg driver raises for a
// server that is not there; nothing else is started.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { asApiError } from '../../api/errors.js';
import { createPool, isDatabaseUnavailable } from '../../db/pool.js';

let closedPort: number;
let silent: net.Server;
let silentPort: number;

beforeAll(async () => {
  // A port nobody listens on: bind one, note it, close it.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  // A server that accepts the connection and then drops it without a word.
  silent = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => silent.close(resolve));
});

async function errorOf(port: number): Promise<unknown> {
  const pool = createPool(`postgres://user:secret@127.0.0.1:${port}/db`);
  try {
    await pool.query('SELECT 1');
    throw new Error('the query should have failed');
  } catch (error) {
    return error;
  } finally {
    await pool.end();
  }
}

describe('Postgres unavailable', () => {
  it('is 503 service_unavailable when nothing listens on the database port', async () => {
    const error = await errorOf(closedPort);
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(asApiError(error)).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('asks the client to retry after a few seconds (Retry-After, whole seconds)', async () => {
    const error = await errorOf(closedPort);
    expect(asApiError(error)?.headers['Retry-After']).toMatch(/^[1-9][0-9]*$/);
  });

  it('is 503 service_unavailable when the server drops the connection', async () => {
    const error = await errorOf(silentPort);
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(asApiError(error)).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('leaves other errors unexpected (500)', () => {
    expect(asApiError(new Error('syntax error at or near "SELEC"'))).toBeUndefined();
    expect(asApiError(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBeUndefined();
  });
});
