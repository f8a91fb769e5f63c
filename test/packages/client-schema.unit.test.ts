// packages/client/src/schema.ts is generated from the OpenAPI document; this fails when someone
// changes the API's schemas without running `npm run client:generate`, so the typed client never
// drifts from what the service serves.
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { generateSchema, SCHEMA_FILE } from '../../packages/client/generate.js';

describe('the typed client', () => {
  it('has the types that the current OpenAPI document generates (run `npm run client:generate`)', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    expect(committed).toBe(await generateSchema());
  });
});
