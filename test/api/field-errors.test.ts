// Bad input gets a clear error naming the field (docs/http-contract.md "Common rules", DESIGN §6):
// for any single-field corruption of a registration, a carrier event, a webhook endpoint or a
// tracking feed (a required field removed, an unknown key added, a value of the wrong type, a
// number out of its range, a string longer than its limit), the API answers 400 `bad_request` in the
// error shape, and its message names that field's dotted path in the `field: what is wrong` form,
// never in zod's own words. Each kind of issue's wording: test/api/field-errors.unit.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, request } from './http.js';

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness({ worker: false, env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  key = (await h.createKey(await h.createIssuer('Field Errors Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

type Kind = 'string' | 'number' | 'object' | 'array';

interface FieldSpec {
  path: string[];
  kind: Kind;
  required?: boolean;
  nullable?: boolean;
  maxLength?: number;
  /** Whole numbers from–to. */
  range?: [number, number];
}

interface BodySpec {
  name: string;
  path: () => string;
  valid: () => Record<string, unknown>;
  fields: FieldSpec[];
  /** The strict objects an unknown key can be added to. */
  objects: string[][];
}

const now = () => new Date().toISOString();

const BODIES: BodySpec[] = [
  {
    name: 'a registration (POST /v1/dispatches)',
    path: () => '/v1/dispatches',
    valid: () => ({
      id: randomUUID(),
      dispatch_date: now(),
      destination: { postal_code: '75011', country_code: 'FR' },
      locale: 'fr-FR',
      carrier: 'La Poste',
      tracking_number: 'LP123456789FR',
      reference: 'order-42',
    }),
    fields: [
      { path: ['id'], kind: 'string' },
      { path: ['dispatch_date'], kind: 'string' },
      { path: ['destination'], kind: 'object', required: true },
      { path: ['destination', 'postal_code'], kind: 'string', required: true, maxLength: 16 },
      { path: ['destination', 'country_code'], kind: 'string', required: true },
      { path: ['locale'], kind: 'string', maxLength: 35 },
      { path: ['carrier'], kind: 'string', maxLength: 100 },
      { path: ['tracking_number'], kind: 'string', maxLength: 100 },
      { path: ['reference'], kind: 'string', maxLength: 200 },
    ],
    objects: [[], ['destination']],
  },
  {
    name: 'a carrier event (POST /v1/dispatches/{id}/events)',
    path: () => `/v1/dispatches/${randomUUID()}/events`,
    valid: () => ({ vocabulary: 'service', status: 'exception', occurred_at: now(), event_id: 'evt-1', reason: 'lost', location: 'Paris' }),
    fields: [
      { path: ['vocabulary'], kind: 'string' },
      { path: ['status'], kind: 'string', required: true },
      { path: ['occurred_at'], kind: 'string', required: true },
      { path: ['event_id'], kind: 'string', maxLength: 200 },
      { path: ['reason'], kind: 'string' },
      { path: ['location'], kind: 'string', maxLength: 200 },
    ],
    objects: [[]],
  },
  {
    name: 'a webhook endpoint (POST /v1/webhook_endpoints)',
    path: () => '/v1/webhook_endpoints',
    valid: () => ({
      url: 'https://hooks.example.com/cards',
      events: ['status.updated', 'delivery.completed'],
      description: 'card updates',
      headers: { 'X-Token': 'abc123' },
      rate_limit: 10,
    }),
    fields: [
      { path: ['url'], kind: 'string', required: true, maxLength: 2048 },
      { path: ['events'], kind: 'array', required: true },
      { path: ['events', '0'], kind: 'string' },
      { path: ['description'], kind: 'string', nullable: true, maxLength: 500 },
      { path: ['headers'], kind: 'object' },
      { path: ['headers', 'X-Token'], kind: 'string', maxLength: 1024 },
      { path: ['rate_limit'], kind: 'number', nullable: true, range: [1, 1000] },
    ],
    objects: [[]],
  },
  ...(['ship24', 'easypost', 'aftership'] as const).map((provider): BodySpec => ({
    name: `a ${provider} tracking feed (POST /v1/tracking_feeds)`,
    path: () => '/v1/tracking_feeds',
    valid: () => ({ provider, secret: 'whsec-provider-secret', description: 'our aggregator' }),
    fields: [
      { path: ['provider'], kind: 'string', required: true },
      { path: ['secret'], kind: 'string', required: true, maxLength: 512 },
      { path: ['description'], kind: 'string', maxLength: 200 },
    ],
    objects: [[]],
  })),
  {
    name: 'a shippo tracking feed (POST /v1/tracking_feeds)',
    path: () => '/v1/tracking_feeds',
    valid: () => ({ provider: 'shippo', description: 'our aggregator' }),
    fields: [
      { path: ['provider'], kind: 'string', required: true },
      { path: ['description'], kind: 'string', maxLength: 200 },
    ],
    objects: [[]],
  },
];

interface Corruption {
  kind: 'removed' | 'unknown key' | 'wrong type' | 'out of range' | 'too long';
  field: string[];
  /** Sets the corruption on a valid body. */
  apply(body: Record<string, unknown>): void;
}

function parentOf(body: Record<string, unknown>, path: string[]): Record<string, unknown> {
  return path.slice(0, -1).reduce<Record<string, unknown>>((node, name) => node[name] as Record<string, unknown>, body);
}

const setAt = (path: string[], value: unknown) => (body: Record<string, unknown>) => {
  parentOf(body, path)[path[path.length - 1]] = value;
};

/** JSON values of every type but the field's own (null only where the field does not take it). */
function wrongValue(field: FieldSpec): fc.Arbitrary<unknown> {
  const byKind: Record<Kind | 'boolean' | 'null', fc.Arbitrary<unknown>> = {
    string: fc.string({ maxLength: 10 }),
    number: fc.integer(),
    boolean: fc.boolean(),
    null: fc.constant(null),
    array: fc.array(fc.integer(), { maxLength: 3 }),
    object: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.integer(), { maxKeys: 3 }),
  };
  const kinds = (Object.keys(byKind) as Array<keyof typeof byKind>).filter(
    (kind) => kind !== field.kind && !(kind === 'null' && field.nullable),
  );
  return fc.oneof(...kinds.map((kind) => byKind[kind]));
}

/** Any JSON value but one holding a `__proto__` key: the body parser refuses those before any field is read (registration.test.ts). */
const jsonValueWithoutProto = fc.jsonValue({ maxDepth: 1 }).filter((value) => !JSON.stringify(value).includes('"__proto__"'));

function corruptions(spec: BodySpec): fc.Arbitrary<Corruption> {
  const options: Array<fc.Arbitrary<Corruption>> = [];
  const required = spec.fields.filter((field) => field.required);
  options.push(
    fc.constantFrom(...required).map((field) => ({
      kind: 'removed' as const,
      field: field.path,
      apply: (body: Record<string, unknown>) => {
        delete parentOf(body, field.path)[field.path[field.path.length - 1]];
      },
    })),
  );
  const known = new Set(spec.fields.map((field) => field.path.join('.')));
  options.push(
    fc
      .tuple(fc.constantFrom(...spec.objects), fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/), jsonValueWithoutProto)
      .filter(([object, name]) => !known.has([...object, name].join('.')) && name !== 'vocabulary')
      .map(([object, name, value]) => ({ kind: 'unknown key' as const, field: [...object, name], apply: setAt([...object, name], value) })),
  );
  options.push(
    fc
      .constantFrom(...spec.fields)
      .chain((field) =>
        wrongValue(field).map((value) => ({ kind: 'wrong type' as const, field: field.path, apply: setAt(field.path, value) })),
      ),
  );
  const ranged = spec.fields.filter((field) => field.range);
  if (ranged.length > 0)
    options.push(
      fc.constantFrom(...ranged).chain((field) => {
        const [min, max] = field.range!;
        const value = fc.oneof(
          fc.integer({ min: max + 1 }),
          fc.integer({ max: min - 1 }),
          fc.double({ min, max, noNaN: true }).filter((n) => !Number.isInteger(n)),
        );
        return value.map((n) => ({ kind: 'out of range' as const, field: field.path, apply: setAt(field.path, n) }));
      }),
    );
  const limited = spec.fields.filter((field) => field.maxLength);
  options.push(
    fc.constantFrom(...limited).chain((field) =>
      fc.integer({ min: 1, max: 40 }).map((extra) => ({
        kind: 'too long' as const,
        field: field.path,
        apply: setAt(field.path, 'a'.repeat(field.maxLength! + extra)),
      })),
    ),
  );
  return fc.oneof(...options);
}

const ZOD_WORDING =
  /Invalid input|Invalid option|Invalid string|Invalid discriminator|Unrecognized key|Too big|Too small|expected .*, received/;

describe('a single-field corruption of a body is refused with 400 naming the field', () => {
  it.each(BODIES.map((spec) => [spec.name, spec] as const))(
    'for %s',
    async (_, spec) => {
      await fc.assert(
        fc.asyncProperty(corruptions(spec), async (corruption) => {
          const body = spec.valid();
          corruption.apply(body);
          const res = await request(h.baseUrl, spec.path(), { headers: bearer(key), body });
          const field = corruption.field.join('.');
          expect(res.status).toBe(400);
          expect(res.body).toEqual({ error: 'bad_request', message: expect.any(String) });
          const parts: string[] = res.body.message.split('; ');
          const named = parts.find((part) => part.startsWith(`${field}: `));
          expect(named).toBeDefined();
          if (corruption.kind === 'removed') expect(named).toMatch(new RegExp(`^${field}: is required`));
          expect(res.body.message).not.toMatch(ZOD_WORDING);
        }),
        { numRuns: 150 },
      );
    },
    120_000,
  );
});

describe('the examples integrators met', () => {
  const post = (path: string, body: unknown) => request(h.baseUrl, path, { headers: bearer(key), body });

  it('says `secret: is required` for a ship24 tracking feed without one', async () => {
    const res = await post('/v1/tracking_feeds', { provider: 'ship24' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: 'secret: is required' });
  });

  it('names an unknown key as a field of its own', async () => {
    const res = await post('/v1/dispatches', { destination: { postal_code: '75011', country_code: 'FR' }, foo: 1 });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^foo: is not a known field \(known: id, dispatch_date, destination, /);
  });

  it('says the bound of a number out of range', async () => {
    const res = await post('/v1/webhook_endpoints', {
      url: 'https://hooks.example.com/cards',
      events: ['status.updated'],
      rate_limit: 1001,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: 'rate_limit: must be at most 1000' });
  });

  it('names the item of a batch in its own result', async () => {
    const res = await post('/v1/dispatches/batch', { dispatches: [{ destination: { postal_code: '75011' } }] });
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({
      result: 'error',
      error: { error: 'bad_request', message: 'destination.country_code: is required' },
    });
  });

  it('names a query parameter the list does not know', async () => {
    const res = await request(h.baseUrl, '/v1/dispatches?staus=delivered', { headers: bearer(key) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^staus: is not a known field/);
  });
});
