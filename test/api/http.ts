// A tiny HTTP client for the API tests, on node:http rather than fetch: fetch trims header values
// (so it could not send "Bearer <key> " with a trailing space) and cannot pick the local address
// (tests use 127.0.0.x to appear as distinct client IPs).
import http from 'node:http';

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: any;
}

export interface TestRequest {
  method?: string;
  /** A list sends the header once per item (as a proxy may pass on a header given twice). */
  headers?: Record<string, string | string[]>;
  /** An object is sent as JSON with Content-Type application/json; a string is sent as is. */
  body?: unknown;
  localAddress?: string;
}

export async function request(baseUrl: string, path: string, options: TestRequest = {}): Promise<TestResponse> {
  const headers: Record<string, string | string[]> = { ...options.headers };
  let payload: string | undefined;
  if (typeof options.body === 'string') payload = options.body;
  else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? (payload === undefined ? 'GET' : 'POST'), headers, localAddress: options.localAddress, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** A registration body with a fresh id. */
export function registrationFor(id: string, overrides: Record<string, unknown> = {}) {
  return { id, destination: { postal_code: '75011', country_code: 'FR' }, ...overrides };
}
