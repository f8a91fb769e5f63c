// API key format, generation and hashing (docs/http-contract.md). A key is `cds_<mode>_` + 32 random base62
// characters + a 6-character base62 CRC32 of everything before it, so secret scanners can spot a
// leaked key and a mistyped one is refused without a database lookup. Only the SHA-256 of the key
// is stored; the first 12 random characters (`lookup`) find the row, and the hashes are then
// compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

// webhooks:read: events, replays and endpoint reads; webhooks:write: endpoint changes, replays, test events
// (docs/http-contract.md "Scopes"). A key created without a list of scopes has every one of them.
export const SCOPES = ['status:read', 'dispatches:write', 'events:write', 'webhooks:read', 'webhooks:write'] as const;
export type Scope = (typeof SCOPES)[number];
export type KeyMode = 'live' | 'test';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const LOOKUP_LENGTH = 12;
const KEY_PATTERN = /^cds_(live|test)_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

export interface ParsedKey {
  mode: KeyMode;
  lookup: string;
  hash: Buffer;
}

function base62(bytes: Buffer, length: number): string {
  // Rejection sampling keeps every character uniformly distributed.
  let out = '';
  let pool = bytes;
  let i = 0;
  while (out.length < length) {
    if (i >= pool.length) {
      pool = randomBytes(length * 2);
      i = 0;
    }
    const byte = pool[i++];
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

function checksum(text: string): string {
  let value = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function generateKey(mode: KeyMode): { key: string; lookup: string; hash: Buffer } {
  const body = `cds_${mode}_${base62(randomBytes(RANDOM_LENGTH * 2), RANDOM_LENGTH)}`;
  const key = body + checksum(body);
  return { key, lookup: lookupOf(key), hash: hashKey(key) };
}

function lookupOf(key: string): string {
  return key.slice(`cds_live_`.length, `cds_live_`.length + LOOKUP_LENGTH);
}

/** Checks the format and checksum; returns undefined for anything that cannot be one of our keys. */
export function parseKey(key: string): ParsedKey | undefined {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  const body = key.slice(0, key.length - CHECKSUM_LENGTH);
  if (checksum(body) !== match[3]) return undefined;
  return { mode: match[1] as KeyMode, lookup: lookupOf(key), hash: hashKey(key) };
}

export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export function parseScopes(text: string): Scope[] {
  const scopes = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope)) throw new Error(`unknown scope "${scope}" (known: ${SCOPES.join(', ')})`);
  }
  return [...new Set(scopes)] as Scope[];
}
