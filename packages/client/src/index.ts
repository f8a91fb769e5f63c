// The Card Delivery Status Service's typed client: openapi-fetch over the types that
// openapi-typescript generates from the service's OpenAPI document (src/schema.ts, see
// ../generate.ts), so every path, parameter, body and response is checked by the compiler.
//
//   const api = createClient({ baseUrl: 'https://cds.example', apiKey: process.env.CDS_API_KEY! });
//   const { data, error } = await api.GET('/v1/status/{id}', { params: { path: { id } } });
import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type * from './schema.js';
export type CardDeliveryClient = Client<paths>;

/** A component schema's type by name, e.g. `Schema<'StatusRecord'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

export interface CreateClientOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** The service's origin, e.g. `https://cds.example` (the paths already start with /v1). */
  baseUrl: string;
  /** An API key (`cds_live_…` or `cds_test_…`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Headers sent with every request besides Authorization; per-request headers go in each call's `headers`. */
  headers?: Record<string, string>;
}

export function createClient({ baseUrl, apiKey, headers, ...options }: CreateClientOptions): CardDeliveryClient {
  return createFetchClient<paths>({
    ...options,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...headers, Authorization: `Bearer ${apiKey}` },
  });
}
