// Who sent a request and whether it is admitted, decided together (docs/security.md "Rate
// limits"), for the Koa chain (middleware/auth.ts) and the status fast path (api/fast-status.ts).
// A request with a valid key counts against its key's window (RATE_LIMIT_PER_MINUTE); any other
// against its client IP's (RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE), a window of its own, shared by
// every API process in Postgres like the key windows. The point is that a flood of keyless or
// forged-key requests (a key's checksum is public, so a forged one passes the format check) cannot
// cost a database round trip each:
// - a key this process has not verified is looked up only after the client IP's window has
//   admitted the request (so one valid key's first request in this process also takes an IP slot):
//   at most RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE lookups per IP and minute;
// - once this process knows an IP's window is full, the rate limiter refuses without asking Postgres
//   (api/rate-limiter.ts), and so no lookup and no window write happen for that IP, except
// - one lookup a second per blocked IP for a key never seen (TRICKLE_MS), so that a real new key
//   sent from a busy address (a NAT, a proxy) is not locked out for the rest of the minute;
// - a header this process has verified (`known`, api/key-cache.ts) is always looked up when due and
//   counted against its own key's window, never the IP's: valid keys keep their full rate.
// Misses are cached by api/key-cache.ts, so a repeated forged key is not looked up again either.
import type { Admission, RateLimiter } from './rate-limiter.js';
import { LRUCache } from 'lru-cache';
import type { ApiKey, ApiKeyCache, Authentication } from './key-cache.js';
import { rateLimitSubject } from './middleware/rate-limit.js';

const TRICKLE_MS = 1000;
const MAX_TRICKLE_ADDRESSES = 10_000;

export interface AdmittedRequest {
  /** The caller's key, when the Authorization header held a valid one. */
  key?: ApiKey;
  /** Why the header was refused (the 401 message). */
  problem?: string;
  /** The key lookup failed (e.g. Postgres unreachable). */
  failure?: unknown;
  /** The window the request counted against: its key's, or its client IP's. */
  admission: Admission;
}

export class RequestAdmission {
  /** Blocked IP → when it last had a key looked up. */
  private readonly trickle = new LRUCache<string, number>({ max: MAX_TRICKLE_ADDRESSES });

  constructor(
    private readonly keys: ApiKeyCache,
    private readonly keyLimiter: RateLimiter,
    private readonly ipLimiter: RateLimiter,
  ) {}

  /** `counted`: the admission of a request the fast path already counted against its key. */
  async admit(header: string | undefined, ip: string, counted?: Admission): Promise<AdmittedRequest> {
    if (this.keys.classify(header) !== 'lookup') {
      const auth = await this.authenticate(header);
      const limiter = auth.key ? this.keyLimiter : this.ipLimiter;
      return { ...auth, admission: (auth.key && counted) || (await limiter.take(rateLimitSubject(auth.key, ip))) };
    }
    const byIp = await this.ipLimiter.take(rateLimitSubject(undefined, ip));
    if (!byIp.admitted && !this.trickleAllows(ip))
      return { problem: 'key not checked: too many requests without a valid key', admission: byIp };
    const auth = await this.authenticate(header);
    if (!auth.key) return { ...auth, admission: byIp };
    return { ...auth, admission: counted ?? (await this.keyLimiter.take(rateLimitSubject(auth.key))) };
  }

  private async authenticate(header: string | undefined): Promise<Partial<Authentication> & { failure?: unknown }> {
    try {
      return await this.keys.authenticate(header);
    } catch (error) {
      return { failure: error };
    }
  }

  private trickleAllows(ip: string): boolean {
    const now = Date.now();
    if (now - (this.trickle.get(ip) ?? 0) < TRICKLE_MS) return false;
    this.trickle.set(ip, now);
    return true;
  }
}
