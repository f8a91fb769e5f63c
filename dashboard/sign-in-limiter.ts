// Sign-in attempts per email + client IP: at most 5 failures in 15 minutes, counted in Postgres
// (rate-limiter-flexible's Postgres store, table from our migration) so the limit holds across API
// processes. A success clears the count; a refused attempt is not checked at all.
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Pool } from '../db/pool.js';

export const SIGN_IN_FAILURES_ALLOWED = 5;
const WINDOW_SECONDS = 15 * 60;

export class SignInLimiter {
  private readonly limiter: RateLimiterPostgres;

  constructor(pool: Pool) {
    this.limiter = new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: 'dashboard_sign_in_limits',
      tableCreated: true,
      keyPrefix: 'sign-in',
      points: SIGN_IN_FAILURES_ALLOWED,
      duration: WINDOW_SECONDS,
    });
  }

  private static key(email: string, ip: string): string {
    return `${email.trim().toLowerCase()}|${ip}`;
  }

  /** Seconds until another attempt is allowed, or 0 when one is allowed now. */
  async blockedFor(email: string, ip: string): Promise<number> {
    const state = await this.limiter.get(SignInLimiter.key(email, ip));
    if (!state || state.consumedPoints < SIGN_IN_FAILURES_ALLOWED) return 0;
    return Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    try {
      await this.limiter.consume(SignInLimiter.key(email, ip));
    } catch (error) {
      // Rejection with a RateLimiterRes only means "now blocked": that is what blockedFor reads.
      if (!(error instanceof RateLimiterRes)) throw error;
    }
  }

  async clear(email: string, ip: string): Promise<void> {
    await this.limiter.delete(SignInLimiter.key(email, ip));
  }
}
