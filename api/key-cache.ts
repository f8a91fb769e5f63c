// Resolves an `Authorization` header to an API key, with an in-process cache so that steady-state
// requests never wait on Postgres for auth. A cached row is trusted for API_KEY_CACHE_TTL_MS
// (≤ 5 s), so a revocation reaches every API process within that time. Garbage never reaches the
// database: the key's format and checksum are checked first (domain/api-keys.ts). A lookup that
// found no key is remembered as long as a row, so a repeated forged key costs one lookup per TTL.
// Every map is a bounded LRU, and found rows and misses are kept apart: a flood of distinct forged
// keys (their checksum is public) fills only the misses and never evicts a valid key's row.
// `classify` tells api/request-admission.ts whether a header is one this process has verified, so
// that a client IP refused for requests without a valid key costs no lookup for them.
import { hashesEqual, parseKey, type KeyMode, type Scope } from '../domain/api-keys.js';
import { findApiKeyByLookup, touchApiKey, type ApiKeyRow } from '../db/issuers.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../platform/logger.js';
import { LRUCache } from 'lru-cache';

export interface ApiKey {
  id: string;
  issuerId: string;
  mode: KeyMode;
  scopes: readonly Scope[];
}

export type Authentication = { key: ApiKey; problem?: undefined } | { key?: undefined; problem: string };

/**
 * - `known`: a header this process has verified (a key neither revoked nor found invalid since),
 *   possibly due for revalidation against its row;
 * - `local`: decided without the database (no header, malformed, bad checksum, row or miss cached);
 * - `lookup`: a well-formed key this process has not verified, whose row it must read.
 */
export type HeaderKind = 'known' | 'local' | 'lookup';

const BEARER = /^Bearer ([^\s]+)$/;
const TOUCH_INTERVAL_MS = 60_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  row: ApiKeyRow;
  expiresAt: number;
}

/** A header already verified against a row: the hot path skips parsing and hashing it again. */
interface Verified {
  key: ApiKey;
  revokedAt: Date | null;
  expiresAt: number;
}

export class ApiKeyCache {
  private readonly entries = new LRUCache<string, Entry>({ max: MAX_ENTRIES });
  /** Lookups that found no key: lookup → until when that is trusted. */
  private readonly misses = new LRUCache<string, number>({ max: MAX_ENTRIES });
  private readonly verified = new LRUCache<string, Verified>({ max: MAX_ENTRIES });
  /** One database lookup per key at a time, however many requests wait for it. */
  private readonly loading = new Map<string, Promise<ApiKeyRow | undefined>>();
  private readonly touchedAt = new LRUCache<string, number>({ max: MAX_ENTRIES });

  constructor(
    private readonly pool: Pool,
    private readonly ttlMs: number,
    private readonly logger: Logger,
  ) {}

  /** Whether authenticating `header` needs the database, and whether this process has verified it. */
  classify(header: string | undefined): HeaderKind {
    if (!header) return 'local';
    const now = Date.now();
    const known = this.verified.peek(header);
    if (known && !(known.revokedAt && known.revokedAt.getTime() <= now)) return 'known';
    const match = BEARER.exec(header);
    const parsed = match ? parseKey(match[1]) : undefined;
    if (!parsed) return 'local';
    const cached = this.entries.peek(parsed.lookup)?.expiresAt ?? this.misses.peek(parsed.lookup) ?? 0;
    return cached > now ? 'local' : 'lookup';
  }

  async authenticate(header: string | undefined): Promise<Authentication> {
    if (!header) return { problem: 'missing Authorization header; send "Authorization: Bearer <API_KEY>"' };
    const now = Date.now();
    const known = this.verified.get(header);
    if (known && known.expiresAt > now) return this.accept(known.key, known.revokedAt, now);

    const match = BEARER.exec(header);
    if (!match) return { problem: 'malformed Authorization header; the format is "Bearer", one space, then the key' };
    const parsed = parseKey(match[1]);
    if (!parsed) return { problem: 'invalid API key' };
    const row = await this.row(parsed.lookup);
    if (!row || row.mode !== parsed.mode || !hashesEqual(row.keyHash, parsed.hash)) {
      if (known) this.verified.delete(header); // no longer a key: not `known` any more
      return { problem: 'invalid API key' };
    }
    const key: ApiKey = { id: row.id, issuerId: row.issuerId, mode: row.mode, scopes: row.scopes };
    if (this.ttlMs > 0) {
      // Trusted no longer than the row it was checked against, so revocation still lands in time.
      this.verified.set(header, { key, revokedAt: row.revokedAt, expiresAt: this.entries.peek(parsed.lookup)?.expiresAt ?? now });
    }
    return this.accept(key, row.revokedAt, now);
  }

  private accept(key: ApiKey, revokedAt: Date | null, now: number): Authentication {
    if (revokedAt && revokedAt.getTime() <= now) return { problem: 'this API key has been revoked' };
    this.touch(key.id, now);
    return { key };
  }

  private async row(lookup: string): Promise<ApiKeyRow | undefined> {
    const now = Date.now();
    const cached = this.entries.get(lookup);
    if (cached && cached.expiresAt > now) return cached.row;
    if ((this.misses.get(lookup) ?? 0) > now) return undefined;
    let pending = this.loading.get(lookup);
    if (!pending) {
      pending = findApiKeyByLookup(this.pool, lookup).finally(() => this.loading.delete(lookup));
      this.loading.set(lookup, pending);
    }
    const row = await pending;
    if (this.ttlMs > 0) {
      if (row) {
        this.entries.set(lookup, { row, expiresAt: now + this.ttlMs });
        this.misses.delete(lookup);
      } else {
        this.misses.set(lookup, now + this.ttlMs);
        this.entries.delete(lookup);
      }
    }
    return row;
  }

  /** Records last use at most once a minute per key, without making the request wait. */
  private touch(keyId: string, now: number): void {
    if (now - (this.touchedAt.get(keyId) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.touchedAt.set(keyId, now);
    touchApiKey(this.pool, keyId).catch((error) => this.logger.warn({ err: error, key_id: keyId }, 'could not record API key use'));
  }
}
