// How refused input is worded (docs/http-contract.md "Common rules"): each zod issue as
// `field: what is wrong`, the field named by its dotted path (`destination.postal_code`,
// `events.0`), in the service's words rather than zod's ("is required", "must be at most 1000",
// "is not a known field"). A message a schema states itself is kept. The API (api/errors.ts), the
// tracking feeds' inbound bodies (domain/tracking-feeds/common.ts) and the admin CLI
// (cli/admin/context.ts) parse with FIELD_ERRORS and word the issues here, so every edge says it
// alike. Messages never quote a value that was sent (a value may be a secret, and messages are
// logged); only the names of unknown keys, cut to KEY_SHOWN characters.
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;
type RawIssue = z.core.$ZodRawIssue;

const KEY_SHOWN = 100;
/** Problems named in one message; the rest are counted. */
const PROBLEMS_SHOWN = 10;

/** zod's parse options for input from outside: the service's wording, and the input kept on each issue (to tell a missing field). */
export const FIELD_ERRORS = { error: fieldErrorMap, reportInput: true } as const;

export interface FieldProblem {
  /** The dotted path, `body` for the input itself. */
  field: string;
  problem: string;
}

/** `field: problem; …`, every failing field (at most PROBLEMS_SHOWN, then how many more), under `prefix` when the schema read a part. */
export function describeIssues(issues: readonly Issue[], prefix: readonly string[] = []): string {
  const problems = fieldProblems(issues, prefix);
  const shown = problems.slice(0, PROBLEMS_SHOWN).map(({ field, problem }) => `${field}: ${problem}`);
  const more = problems.length - PROBLEMS_SHOWN;
  return more > 0 ? [...shown, `and ${more} more problems`].join('; ') : shown.join('; ');
}

/** The issues as fields and problems, one per unknown key, the closest member's for a union. */
export function fieldProblems(issues: readonly Issue[], prefix: readonly (string | number)[] = []): FieldProblem[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path.map((part) => (typeof part === 'symbol' ? String(part.description) : part))];
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((name) => ({ field: fieldName([...path, name]), problem: issue.message }));
    if (issue.code === 'invalid_union' && issue.errors.length > 0 && !('discriminator' in issue)) {
      const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0];
      if (closest.length > 0) return fieldProblems(closest, path);
    }
    return [{ field: fieldName(path), problem: isMissing(issue) ? required(issue) : issue.message }];
  });
}

/** The message of one issue, without its field (for callers that name the field their own way, e.g. `--option`). */
export function issueProblem(issue: Issue): string {
  return fieldProblems([issue])[0].problem;
}

function fieldName(path: readonly (string | number)[]): string {
  if (path.length === 0) return 'body';
  return path.map((part) => (typeof part === 'string' && part.length > KEY_SHOWN ? `${part.slice(0, KEY_SHOWN)}…` : part)).join('.');
}

/** A field that was left out: zod reports it as a value of the wrong type (or not an option) whose input is undefined. */
function isMissing(issue: Issue): boolean {
  if (issue.path.length === 0 || !('input' in issue)) return false;
  if (issue.code === 'invalid_type' || issue.code === 'invalid_value') return issue.input === undefined;
  if (issue.code === 'invalid_union' && 'discriminator' in issue) {
    const discriminator = (issue as { discriminator?: string }).discriminator!;
    return typeof issue.input === 'object' && issue.input !== null && (issue.input as Record<string, unknown>)[discriminator] === undefined;
  }
  return false;
}

function required(issue: Issue): string {
  const options = issue.code === 'invalid_value' ? issue.values : issue.code === 'invalid_union' ? unionOptions(issue) : [];
  return options.length > 1 ? `is required (one of ${options.map(String).join(', ')})` : 'is required';
}

function unionOptions(issue: Issue): readonly unknown[] {
  return (issue as { options?: readonly unknown[] }).options ?? [];
}

/**
 * The per-parse error map (zod's `error` option): the wording of the issues a schema leaves to zod.
 * It sees the issue before its path is set; fieldProblems adds the field.
 */
export function fieldErrorMap(issue: RawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      if (issue.expected === 'int') return 'must be a whole number';
      // Text coerced to a number (the admin CLI's numeric options): NaN is zod's, not what was typed.
      if (Number.isNaN(issue.input)) return `must be ${typeName(issue.expected)}`;
      return `must be ${typeName(issue.expected)}, not ${received(issue.input)}`;
    case 'invalid_value':
      if (issue.input === undefined) return 'is required';
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map(String).join(', ')}`;
    case 'too_big':
      return bound(issue.origin, issue.maximum, issue.inclusive ?? true, issue.exact, 'most', 'less than', 'fewer than');
    case 'too_small':
      return bound(issue.origin, issue.minimum, issue.inclusive ?? true, issue.exact, 'least', 'more than', 'more than');
    case 'invalid_format':
      return formatProblem(issue as RawIssue & z.core.$ZodIssueInvalidStringFormat);
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return knownFields(issue.inst);
    case 'invalid_key': {
      const inner = issue.issues[0]?.message;
      return inner ? `is not a valid key (${inner})` : 'is not a valid key';
    }
    case 'invalid_element':
      return `holds a value that is not valid`;
    case 'invalid_union': {
      const options = unionOptions(issue as Issue);
      if (options.length > 0) return `must be one of ${options.map(String).join(', ')}`;
      return 'matches none of the accepted forms';
    }
    default:
      return 'is not valid';
  }
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  bigint: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  record: 'an object',
  map: 'an object',
  date: 'a date',
  null: 'null',
  nan: 'a number',
};

const typeName = (expected: string) => TYPE_NAMES[expected] ?? expected;

function received(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  if (typeof input === 'boolean') return 'a boolean';
  if (typeof input === 'number' && !Number.isFinite(input)) return String(input);
  return TYPE_NAMES[typeof input] ?? typeof input;
}

const UNITS: Record<string, [string, string]> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
  map: ['entry', 'entries'],
  file: ['byte', 'bytes'],
};

function bound(
  origin: string,
  limit: number | bigint,
  inclusive: boolean,
  exact: boolean | undefined,
  atWord: 'most' | 'least',
  strictNumber: string,
  strictSize: string,
): string {
  const unit = UNITS[origin];
  const n = String(limit);
  if (unit) {
    const noun = Number(limit) === 1 ? unit[0] : unit[1];
    const measure = (words: string) => (origin === 'string' ? `must be ${words} ${n} ${noun} long` : `must have ${words} ${n} ${noun}`);
    if (exact) return measure('exactly');
    return measure(inclusive ? `at ${atWord}` : strictSize);
  }
  if (origin === 'date') return `must be ${inclusive ? 'at or ' : ''}${atWord === 'most' ? 'before' : 'after'} ${n}`;
  if (exact) return `must be exactly ${n}`;
  return inclusive ? `must be at ${atWord} ${n}` : `must be ${strictNumber} ${n}`;
}

const FORMAT_NAMES: Record<string, string> = {
  email: 'an e-mail address',
  url: 'a URL',
  uuid: 'a UUID',
  guid: 'a GUID',
  uuidv4: 'a UUID v4',
  datetime: 'an ISO 8601 timestamp with an offset, e.g. 2026-12-07T09:30:00Z',
  date: 'an ISO 8601 date (YYYY-MM-DD)',
  time: 'an ISO 8601 time',
  duration: 'an ISO 8601 duration',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  cidrv4: 'an IPv4 range',
  cidrv6: 'an IPv6 range',
  base64: 'base64 text',
  base64url: 'base64url text',
  e164: 'an E.164 phone number',
  jwt: 'a JWT',
};

function formatProblem(issue: z.core.$ZodIssueInvalidStringFormat): string {
  const extra = issue as z.core.$ZodIssueInvalidStringFormat & { prefix?: string; suffix?: string; includes?: string };
  switch (issue.format) {
    case 'regex':
      return `must match the pattern ${regexSource(issue.pattern)}`;
    case 'starts_with':
      return `must start with ${JSON.stringify(extra.prefix)}`;
    case 'ends_with':
      return `must end with ${JSON.stringify(extra.suffix)}`;
    case 'includes':
      return `must include ${JSON.stringify(extra.includes)}`;
    default:
      return `must be ${FORMAT_NAMES[issue.format] ?? `in the ${issue.format} format`}`;
  }
}

/** `/^[a-z]+$/` as `^[a-z]+$`. */
function regexSource(pattern: string | undefined): string {
  if (!pattern) return 'required';
  const match = /^\/(.*)\/[a-z]*$/s.exec(pattern);
  return match ? match[1] : pattern;
}

/** The message of an unknown key: the object's own fields, when the schema says them. */
function knownFields(inst: unknown): string {
  const shape = (inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
  const names = shape ? Object.keys(shape) : [];
  return names.length > 0 ? `is not a known field (known: ${names.join(', ')})` : 'is not a known field';
}
