// The service's lists of names (domain/vocabulary.ts) have one copy: no other source file spells a
// whole list out again, the OpenAPI document states each list as the vocabulary holds it, and the
// docs name each status, reason, effect and webhook event type where a reader looks for them
// (docs/states.md, docs/carrier-events.md, docs/webhooks.md).
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiJson } from '../../api/openapi.js';
import {
  DISPATCH_STATUSES,
  EVENT_EFFECTS,
  EXCEPTION_REASONS,
  SERVICE_EXCEPTION_REASONS,
  WEBHOOK_EVENT_TYPES,
} from '../../domain/vocabulary.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
/** The text of a document's section, from its heading to the next heading of the same or a higher level. */
function section(file: string, heading: string): string {
  const text = read(file);
  const match = new RegExp(`^(#+) ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').exec(text);
  if (!match) throw new Error(`${file} has no heading "${heading}"`);
  const rest = text.slice(match.index + match[0].length);
  const next = new RegExp(`^#{1,${match[1].length}} `, 'm').exec(rest);
  return rest.slice(0, next ? next.index : undefined);
}

/** The folders of the product, where a second copy of a list would drift. */
const PRODUCT = [
  'domain',
  'api',
  'dashboard',
  'db',
  'cli',
  'ingest',
  'activities',
  'workflows',
  'temporal',
  'worker',
  'consumer-kit',
  'platform',
];
const LISTS = { DISPATCH_STATUSES, EXCEPTION_REASONS, EVENT_EFFECTS, WEBHOOK_EVENT_TYPES } as const;

describe('domain/vocabulary.ts', () => {
  it.each(Object.keys(LISTS))('is the only source file with an array of the whole of %s', (name) => {
    const list = LISTS[name as keyof typeof LISTS];
    const sources = PRODUCT.flatMap((folder) =>
      readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' }).map((file) => `${folder}/${file}`),
    ).filter((file) => file.endsWith('.ts') && !file.includes('node_modules/') && !file.includes('/dist/'));
    // An array literal of strings (comments allowed) holding every name of the list is a copy;
    // a table keyed by the names (Record<DispatchStatus, …>) is checked whole by the compiler.
    const arrays = (text: string) => text.match(/\[(?:\s*(?:\/\/[^\n]*)?\s*'[^'\n]*',?)+\s*\]/g) ?? [];
    const copies = sources.filter((file) => arrays(read(file)).some((array) => list.every((value) => array.includes(`'${value}'`))));
    expect(copies).toEqual(['domain/vocabulary.ts']);
  });

  it('gives the OpenAPI document its statuses, reasons and effects', () => {
    const doc = JSON.parse(openApiJson()) as { components: { schemas: Record<string, any> } };
    const schemas = doc.components.schemas;
    expect(schemas.DispatchStatus.enum).toEqual([...DISPATCH_STATUSES]);
    const record = schemas.CarrierEventRecord.properties;
    const enumOf = (property: any): string[] =>
      ((property.enum ?? property.anyOf.find((s: any) => s.enum).enum) as unknown[]).filter((v): v is string => v !== null);
    expect(enumOf(record.effect)).toEqual([...EVENT_EFFECTS]);
    expect(enumOf(record.reason)).toEqual([...EXCEPTION_REASONS, ...SERVICE_EXCEPTION_REASONS]);
  });

  it('has every effect, and no other, in the table of docs/states.md "What an event does: effects"', () => {
    const rows = [...section('docs/states.md', 'What an event does: effects').matchAll(/^\| `([a-z_]+)` +\|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual([...EVENT_EFFECTS].sort());
  });

  it('has every status named in docs/states.md, every reason in docs/carrier-events.md and every webhook event type in docs/webhooks.md', () => {
    const states = read('docs/states.md');
    expect(DISPATCH_STATUSES.filter((status) => !states.includes(`\`${status}\``))).toEqual([]);
    expect(SERVICE_EXCEPTION_REASONS.filter((reason) => !section('docs/states.md', 'Overdue').includes(`\`${reason}\``))).toEqual([]);
    const events = section('docs/carrier-events.md', 'POST /v1/dispatches/{id}/events');
    expect(EXCEPTION_REASONS.filter((reason) => !events.includes(`\`${reason}\``))).toEqual([]);
    const endpoints = section('docs/webhooks.md', 'Endpoints');
    expect(WEBHOOK_EVENT_TYPES.filter((type) => !endpoints.includes(`\`${type}\``))).toEqual([]);
  });
});
