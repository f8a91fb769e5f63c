// The OpenAPI document (DESIGN.md §3, STYLE.md): valid OpenAPI 3.1, generated from the zod schemas
// that validate requests, covering every route, the error shape, the key and the rate-limit headers.
import { describe, expect, it } from '@jest/globals';
import SwaggerParser from '@apidevtools/swagger-parser';
import { openApiJson } from '../../api/openapi.js';

const document = () => JSON.parse(openApiJson());

describe('GET /v1/openapi.json document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = document();
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(doc)).resolves.toBeDefined();
  });

  it('documents the status, registration and carrier-event paths', () => {
    const { paths } = document();
    expect(Object.keys(paths).sort()).toEqual(['/v1/dispatches', '/v1/dispatches/{id}/events', '/v1/status/{id}']);
    expect(paths['/v1/status/{id}'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['id', 'locale']);
    expect(Object.keys(paths['/v1/status/{id}'].get.responses).sort()).toEqual(['200', '400', '401', '403', '404', '429', '500']);
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
});
