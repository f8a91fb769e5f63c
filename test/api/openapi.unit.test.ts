// The OpenAPI document (docs/http-contract.md, STYLE.md): valid OpenAPI 3.1, generated from the zod schemas
// that validate requests, covering every route, the error shape, the key and the rate-limit headers.
import { describe, expect, it } from '@jest/globals';
import SwaggerParser from '@apidevtools/swagger-parser';
import { openApiJson } from '../../api/openapi.js';
import { ASSIGNED_COUNTRY_CODES, countryCode, localeTag } from '../../domain/field-schemas.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/vocabulary.js';

const document = () => JSON.parse(openApiJson());

describe('GET /v1/openapi.json document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = document();
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(doc)).resolves.toBeDefined();
  });

  it('documents the status, registration, list, batch, carrier-event, test-helper, tracking link, tracking page, webhook endpoint, event, replay, erasure and tracking feed paths', () => {
    const { paths } = document();
    expect(Object.keys(paths).sort()).toEqual([
      '/v1/dispatches',
      '/v1/dispatches/batch',
      '/v1/dispatches/{id}',
      '/v1/dispatches/{id}/events',
      '/v1/dispatches/{id}/tracking_links',
      '/v1/dispatches/{id}/tracking_links/{link_id}',
      '/v1/erasures/{erasure_id}',
      '/v1/events',
      '/v1/events/{webhook_event_id}',
      '/v1/inbound/{feed_id}',
      '/v1/replays/{replay_id}',
      '/v1/status/{id}',
      '/v1/test_helpers/dispatches/{id}/fail',
      '/v1/test_helpers/dispatches/{id}/{action}',
      '/v1/tracking_feeds',
      '/v1/tracking_feeds/{feed_id}',
      '/v1/tracking_feeds/{feed_id}/ignored',
      '/v1/tracking_feeds/{feed_id}/unmatched',
      '/v1/tracking_page',
      '/v1/webhook_endpoints',
      '/v1/webhook_endpoints/{webhook_endpoint_id}',
      '/v1/webhook_endpoints/{webhook_endpoint_id}/replay',
      '/v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret',
      '/v1/webhook_endpoints/{webhook_endpoint_id}/test',
    ]);
    expect(Object.keys(paths['/v1/webhook_endpoints/{webhook_endpoint_id}']).sort()).toEqual(['delete', 'get', 'patch']);
    expect(Object.keys(paths['/v1/dispatches']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/v1/dispatches/{id}'])).toEqual(['delete']);
    expect(Object.keys(paths['/v1/tracking_feeds/{feed_id}']).sort()).toEqual(['delete', 'get', 'patch']);
    // No API key on the inbound endpoint: the provider's own signature (docs/tracking-feeds.md "Inbound").
    expect(Object.keys(paths['/v1/inbound/{feed_id}']).sort()).toEqual(['description', 'head', 'post']);
    expect(paths['/v1/inbound/{feed_id}'].post.security).toEqual([]);
    expect(paths['/v1/status/{id}'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['If-None-Match', 'id', 'locale']);
    expect(Object.keys(paths['/v1/status/{id}'].get.responses).sort()).toEqual([
      '200',
      '304',
      '400',
      '401',
      '403',
      '404',
      '429',
      '500',
      '503',
    ]);
  });

  it('takes the status record and the error body from the zod schemas', () => {
    const { components } = document();
    expect(components.schemas.DispatchStatusRecord.required.sort()).toEqual([
      'destination',
      'dispatch_date',
      'id',
      'prediction',
      'status',
      'ui_suggestion',
    ]);
    expect(components.schemas.Error.properties.error.enum).toContain('rate_limit_exceeded');
    expect(components.schemas.DispatchRegistration.properties.destination).toBeDefined();
  });

  it('declares the bearer key and the rate-limit headers', () => {
    const doc = document();
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ok = doc.paths['/v1/status/{id}'].get.responses['200'];
    expect(Object.keys(ok.headers)).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
    expect(Object.keys(doc.paths['/v1/status/{id}'].get.responses['429'].headers)).toContain('Retry-After');
  });

  it('documents every list parameter, and the error shape, key and rate-limit headers on the new paths', () => {
    const { paths } = document();
    const list = paths['/v1/dispatches'].get;
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      'country_code',
      'created_after',
      'created_before',
      'cursor',
      'limit',
      'status',
    ]);
    const operations = [list, paths['/v1/dispatches/batch'].post, paths['/v1/test_helpers/dispatches/{id}/{action}'].post];
    for (const operation of operations) {
      expect(operation.security).toEqual([{ bearerAuth: [] }]);
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429', '500']));
      expect(Object.keys(operation.responses['200'].headers)).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])); // prettier-ignore
      expect(Object.keys(operation.responses['429'].headers)).toContain('Retry-After');
      expect(operation.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
    }
    expect(Object.keys(paths['/v1/dispatches/batch'].post.responses)).toContain('413');
    expect(Object.keys(paths['/v1/test_helpers/dispatches/{id}/{action}'].post.responses)).toEqual(expect.arrayContaining(['403', '404', '409'])); // prettier-ignore
  });

  it("documents the inbound endpoint's headers as api/routes/inbound.ts sets them: a window's X-RateLimit-* on every answer, Retry-After on 429, Allow on the 405 of other methods", () => {
    const inbound = document().paths['/v1/inbound/{feed_id}'];
    const headersOf = (code: string) => Object.keys(inbound.post.responses[code].headers ?? {}).sort();
    const windowHeaders = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id'];
    for (const code of ['200', '400', '401', '404', '413'])
      expect({ code, headers: headersOf(code) }).toEqual({ code, headers: windowHeaders });
    expect(headersOf('429')).toEqual(['Retry-After', ...windowHeaders].sort());
    for (const code of ['200', '404']) expect(Object.keys(inbound.head.responses[code].headers).sort()).toEqual(windowHeaders);
    // Any other method: 405 with Allow (not an operation of its own, which would give the client a method for it).
    expect(inbound.description).toMatch(/405 `method_not_allowed` with `Allow: HEAD, POST`/);
  });

  it('documents 503 service_unavailable with Retry-After and the window headers on every operation that takes a key (Postgres or Temporal unreachable)', () => {
    const { paths } = document();
    const keyed = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { security?: unknown[]; responses: Record<string, { headers?: object; content?: object }> }>)
        .filter(([, operation]) => (operation.security ?? []).length > 0)
        .map(([method, operation]) => ({ at: `${method.toUpperCase()} ${path}`, unavailable: operation.responses['503'] })),
    );
    expect(keyed.length).toBeGreaterThan(20);
    for (const { at, unavailable } of keyed) {
      expect({ at, documented: unavailable !== undefined }).toEqual({ at, documented: true });
      // Its window's X-RateLimit-* as every /v1 answer (optional: not when the key could not be looked up).
      const headers = ['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id'];
      expect({ at, headers: Object.keys(unavailable.headers ?? {}) }).toEqual({ at, headers: expect.arrayContaining(headers) });
      expect(unavailable.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
    }
  });

  it('takes the list, batch and test-helper shapes from the zod schemas', () => {
    const { components, paths } = document();
    expect(components.schemas.DispatchList.required.sort()).toEqual(['data', 'next_cursor']);
    expect(components.schemas.DispatchBatch.properties.dispatches).toMatchObject({ minItems: 1, maxItems: 1000 });
    expect(components.schemas.DispatchBatchItemResult.properties.result.enum).toEqual(['created', 'existing', 'error']);
    const action = paths['/v1/test_helpers/dispatches/{id}/{action}'].post.parameters.find((p: { name: string }) => p.name === 'action');
    expect(action.schema.enum).toEqual(['ship', 'out_for_delivery', 'deliver', 'return']);
    // Only fail takes a body: the other actions refuse one, so the document gives them none to send.
    expect(paths['/v1/test_helpers/dispatches/{id}/{action}'].post.requestBody.content['application/json'].schema).toMatchObject({ additionalProperties: false }); // prettier-ignore
    expect(paths['/v1/test_helpers/dispatches/{id}/{action}'].post.requestBody.content['application/json'].schema.properties ?? {}).toEqual({}); // prettier-ignore
    expect(paths['/v1/test_helpers/dispatches/{id}/fail'].post.requestBody.content['application/json'].schema).toBeDefined();
  });
});

describe('the document states the rules the server enforces (what the fuzz run found)', () => {
  const registration = () => document().components.schemas.DispatchRegistration;
  const listParameter = (name: string) =>
    document().paths['/v1/dispatches'].get.parameters.find((p: { name: string }) => p.name === name).schema;
  const matches = (schema: { pattern: string }, value: string) => new RegExp(schema.pattern, 'u').test(value);

  it('country_code: exactly the assigned ISO 3166-1 alpha-2 codes the server takes, in any letter case ("AA" is not one)', () => {
    const documented = registration().properties.destination.properties.country_code;
    expect(listParameter('country_code').pattern).toBe(documented.pattern);
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    for (const a of letters) {
      for (const b of letters) {
        for (const code of [a + b, (a + b).toLowerCase(), a + b.toLowerCase()]) {
          expect([code, matches(documented, code)]).toEqual([code, countryCode.safeParse(code).success]);
        }
      }
    }
    expect(matches(documented, 'AA')).toBe(false);
    expect(matches(documented, 'Ga')).toBe(true);
  });

  it("country_code: ISO 3166-1's 249 codes and Kosovo's XK, not the aliases and reserved codes Intl (CLDR) also names", () => {
    expect(ASSIGNED_COUNTRY_CODES).toHaveLength(250);
    for (const code of ['GB', 'FR', 'BV', 'HM', 'AQ', 'XK']) expect([code, countryCode.safeParse(code).success]).toEqual([code, true]);
    for (const code of ['UK', 'EU', 'UN', 'EZ', 'QO', 'XA', 'XB', 'SU', 'YU', 'CS', 'DD', 'FX', 'AN', 'TP', 'ZR', 'AC', 'IC', 'EA', 'ZZ'])
      expect([code, countryCode.safeParse(code).success, matches(registration().properties.destination.properties.country_code, code)]).toEqual([code, false, false]); // prettier-ignore
  });

  it('locale: a BCP 47 pattern that refuses "00" and takes what the server takes', () => {
    const documented = registration().properties.locale;
    const samples = [
      'en',
      'fr-CA',
      'fr-ca',
      'zh-Hant-TW',
      'es-419',
      'en-GB-u-ca-buddhist',
      'de-DE-1996',
      '00',
      'e',
      'en_GB',
      'fr-\u0000',
      'english-GB',
    ];
    for (const tag of samples) expect([tag, matches(documented, tag)]).toEqual([tag, localeTag.safeParse(tag).success]);
    expect(matches(documented, '00')).toBe(false);
  });

  it('limit: an integer from 1 to 100', () => {
    expect(listParameter('limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
  });

  it('every free-text field refuses control characters and counts its length in characters', () => {
    const fields = registration().properties;
    const event = document().components.schemas.CarrierEvent.properties;
    const texts = [
      fields.carrier,
      fields.tracking_number,
      fields.reference,
      fields.destination.properties.postal_code,
      event.event_id,
      event.location,
    ];
    for (const schema of texts) {
      expect(matches(schema, 'AB\u0000CD')).toBe(false);
      expect(matches(schema, 'La Poste 𝒞')).toBe(true);
      expect(schema.maxLength).toBeGreaterThan(0);
    }
  });

  it('describes the time bounds that JSON Schema cannot state, on dispatch_date and occurred_at', () => {
    expect(registration().properties.dispatch_date.description).toMatch(/90 days.*1 day/);
    expect(document().components.schemas.CarrierEvent.properties.occurred_at.description).toMatch(/7 days.*15 minutes/);
  });

  it('documents the 409 of a carrier event for a dispatch closed without delivery', () => {
    expect(document().paths['/v1/dispatches/{id}/events'].post.responses['409'].description).toMatch(
      /closed without delivery.*workflow_closed/,
    );
  });
});

describe('the integrator additions in the document (docs/http-contract.md)', () => {
  it('documents the Idempotency-Key header, its 409 and Idempotent-Replayed on both registrations', () => {
    const { paths } = document();
    for (const operation of [paths['/v1/dispatches'].post, paths['/v1/dispatches/batch'].post]) {
      const header = operation.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
      expect(header.required).not.toBe(true);
      expect(header).toMatchObject({ in: 'header', schema: { type: 'string', pattern: '^[\\x20-\\x7e]{1,255}$' } });
      expect(operation.responses['409'].description).toMatch(/Idempotency-Key/);
      expect(operation.responses['200'].headers['Idempotent-Replayed']).toBeDefined();
    }
  });

  it('documents GET /v1/dispatches/{id}/events with the carrier event shape', () => {
    const { paths, components } = document();
    const list = paths['/v1/dispatches/{id}/events'].get;
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['cursor', 'id', 'limit']);
    expect(Object.keys(components.schemas.CarrierEventRecord.properties).sort()).toEqual(
      ['effect', 'event_id', 'id', 'location', 'occurred_at', 'original', 'reason', 'received_at', 'status'].sort(),
    );
  });

  it('documents each carrier vocabulary as a variant of the event body, without the statuses it refuses', () => {
    const { components } = document();
    expect(components.schemas.CarrierEventEasyPost.properties.status.enum).toEqual([
      'pre_transit',
      'in_transit',
      'out_for_delivery',
      'delivered',
      'available_for_pickup',
      'return_to_sender',
      'failure',
      'cancelled',
    ]);
    expect(components.schemas.CarrierEventStripeIssuing.properties.status.enum).toEqual([
      'pending',
      'shipped',
      'delivered',
      'returned',
      'failure',
      'canceled',
    ]);
    expect(components.schemas.CarrierEventRequest.anyOf).toHaveLength(3);
  });
});

describe('caching for pollers and the webhooks in the document (docs/http-contract.md "GET /v1/status/{id}")', () => {
  it('documents If-None-Match, the 304 without a body, and ETag and Cache-Control beside the rate-limit headers', () => {
    const status = document().paths['/v1/status/{id}'].get;
    const header = status.parameters.find((p: { name: string }) => p.name === 'If-None-Match');
    expect(header).toMatchObject({ in: 'header', schema: { type: 'string' } });
    expect(header.required).not.toBe(true);
    expect(status.responses['304'].content).toBeUndefined();
    for (const code of ['200', '304']) {
      expect(Object.keys(status.responses[code].headers)).toEqual(
        expect.arrayContaining([
          'ETag',
          'Cache-Control',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
          'X-Request-Id',
        ]),
      );
    }
  });

  it('lists every webhook event type the service sends under `webhooks`, each a POST of the envelope with its signature headers', () => {
    const doc = document();
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    for (const type of WEBHOOK_EVENT_TYPES) {
      const operation = doc.webhooks[type].post;
      expect(
        operation.parameters
          .filter((p: { in: string }) => p.in === 'header')
          .map((p: { name: string }) => p.name)
          .sort(),
      ).toEqual([
        'X-Service-Delivery-Attempt',
        'X-Service-Event-Id',
        'X-Service-Signature',
        'webhook-id',
        'webhook-signature',
        'webhook-timestamp',
      ]);
      const ref: string = operation.requestBody.content['application/json'].schema.$ref;
      const envelope = doc.components.schemas[ref.replace('#/components/schemas/', '')];
      expect(envelope.required.sort()).toEqual(['data', 'event', 'timestamp']);
      expect(envelope.properties.event.const).toBe(type);
      const data = type === 'webhook_endpoint.disabled' ? 'WebhookEndpointDisabledData' : 'DispatchStatusRecord';
      expect(envelope.properties.data.$ref).toBe(`#/components/schemas/${data}`);
      expect(Object.keys(operation.responses)).toContain('2XX');
    }
  });

  it('stays a valid OpenAPI 3.1 document with its webhooks (swagger-parser)', async () => {
    const doc = document();
    expect(Object.keys(doc.webhooks).length).toBeGreaterThan(0);
    const validated = await SwaggerParser.validate(doc);
    expect(Object.keys((validated as { webhooks?: object }).webhooks ?? {}).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });
});
