// Secrets never reach the logs (docs/security.md): the one logger configuration every process uses
// (platform/logger.ts) censors the Authorization header, API keys and webhook secrets wherever a
// line carries them under the names the code uses.
import { afterAll, describe, expect, it } from '@jest/globals';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '../../platform/logger.js';

const dir = mkdtempSync(path.join(tmpdir(), 'cds-logger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What `write` logged, once its `lines` lines reached the file (the destination writes asynchronously). */
async function logged(lines: number, write: (logger: ReturnType<typeof createLogger>) => void): Promise<string> {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.log`);
  const fd = openSync(file, 'w');
  const logger = createLogger({ level: 'info', name: 'test', destination: fd });
  write(logger);
  await new Promise<void>((resolve, reject) => logger.flush((error) => (error ? reject(error) : resolve())));
  let text = readFileSync(file, 'utf8');
  for (let i = 0; i < 100 && text.split('\n').length <= lines; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    text = readFileSync(file, 'utf8');
  }
  closeSync(fd);
  return text;
}

describe('createLogger', () => {
  const key = 'cds_live_4eC39HqLyjWDarjtT1zdp7dc0a1b2c3d';
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw0Sx6Ex7P8Rw=';

  it('censors an Authorization header, an API key and a webhook secret in a log line', async () => {
    const text = await logged(3, (logger) => {
      logger.info({ req: { headers: { authorization: `Bearer ${key}` } } }, 'request');
      logger.info({ headers: { authorization: `Bearer ${key}` } }, 'headers');
      logger.info({ authorization: `Bearer ${key}`, key, secret }, 'fields');
    });
    expect(text.trim().split('\n')).toHaveLength(3);
    expect(text).not.toContain(key);
    expect(text).not.toContain(secret);
    expect(text.match(/\[redacted\]/g)).toHaveLength(5);
  });

  it('censors a key or secret carried on a logged error', async () => {
    const error = Object.assign(new Error('webhook add failed'), { key, secret });
    const text = await logged(1, (logger) => logger.error({ err: error }, 'failed'));
    expect(text).toContain('webhook add failed');
    expect(text).not.toContain(key);
    expect(text).not.toContain(secret);
  });

  it('drops what a database driver copies from the failing row, under err or error, keeping the code and constraint', async () => {
    const failure = () =>
      Object.assign(new Error('new row for relation "dispatches" violates check constraint "status_check"'), {
        code: '23514',
        constraint: 'status_check',
        table: 'dispatches',
        detail: 'Failing row contains (0b7c…, iss_1, live, 75011, TRK123456789, REF-42, PARIS HUB).',
        where: 'PL/pgSQL function f() line 3 at SQL statement: postal_code 75011',
        internalQuery: "SELECT 'REF-42'",
      });
    const text = await logged(3, (logger) => {
      logger.error({ err: failure() }, 'write failed');
      logger.warn({ error: failure(), durationMs: 3 }, 'Activity failed');
      logger.error({ err: new AggregateError([failure()], 'all attempts failed') }, 'connect failed');
    });
    for (const value of ['75011', 'TRK123456789', 'REF-42', 'PARIS HUB', 'Failing row']) expect(text).not.toContain(value);
    const [first, second] = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(first.err).toMatchObject({ type: 'Error', code: '23514', constraint: 'status_check', table: 'dispatches' });
    expect(first.err.message).toContain('violates check constraint');
    expect(second.error).toMatchObject({ code: '23514', constraint: 'status_check' });
    expect(second.durationMs).toBe(3);
  });
});
