// A tracking page's token is a credential (docs/tracking-page.md "The page"): the request log line and the server span
// show `/t/…` in its place (platform/request-path.ts, api/middleware/request-log.ts); every other
// path, and the page's stylesheet, are logged as they are.
import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { logRequest } from '../../api/middleware/request-log.js';
import { loggablePath } from '../../platform/request-path.js';

const TOKEN = 'q7Xr2k9VfA0bC1dE2fG3hI4jK5lM6nO7pQ8rS9tU0vW';

describe('loggablePath', () => {
  it('cuts the token of a tracking page path', () => {
    expect(loggablePath(`/t/${TOKEN}`)).toBe('/t/…');
    expect(loggablePath(`/t/${TOKEN}/anything`)).toBe('/t/…');
  });

  it('leaves the stylesheet and every other path as they are', () => {
    expect(loggablePath('/t/assets/page-0123456789ab.css')).toBe('/t/assets/page-0123456789ab.css');
    expect(loggablePath('/v1/status/7d3c1a52-1f3e-4c55-9a57-0f6a9c1d2b11')).toBe('/v1/status/7d3c1a52-1f3e-4c55-9a57-0f6a9c1d2b11');
    expect(loggablePath('/dashboard/dispatches')).toBe('/dashboard/dispatches');
  });
});

describe('the request log line', () => {
  it('never carries a tracking page token', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
    logRequest(pino(sink), { requestId: 'r1', method: 'GET', path: `/t/${TOKEN}`, status: 200, started: performance.now() });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(TOKEN);
    expect(JSON.parse(lines[0]).path).toBe('/t/…');
  });
});
