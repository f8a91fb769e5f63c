// Dashboard sign-in limits (docs/dashboard.md "Security model"), counted in Postgres
// (rate-limiter-flexible's Postgres store, table from our migration) so they hold across API
// processes. Three counters, each a fixed window:
//   - e-mail + client address: 5 failures in 15 minutes (a user mistyping is locked out briefly);
//   - account (the normalised e-mail alone): 20 failures in an hour, whatever the addresses, so
//     rotating addresses buys no more guesses;
//   - client address, across accounts: 50 failures in an hour (one password tried on many accounts).
// Every attempt takes a point of each BEFORE the password is verified: a burst of parallel attempts
// cannot all pass a check made while the others are still hashing. A refused attempt gives back the
// points it took from the other counters; a success clears its e-mail + address counter and gives
// back its account and address points (it does not clear the account's count, or a guesser could
// reset it by waiting for the real user to sign in). Unknown e-mails are counted exactly as known
// accounts, so the answers never tell whether an account exists. A client address is an IPv4 address
// or an IPv6 /64 (one host usually holds a whole /64).
import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Pool } from '../db/pool.js';

export const SIGN_IN_FAILURES_ALLOWED = 5;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
export const ACCOUNT_FAILURES_ALLOWED = 20;
export const ACCOUNT_WINDOW_SECONDS = 60 * 60;
export const ADDRESS_FAILURES_ALLOWED = 50;
export const ADDRESS_WINDOW_SECONDS = 60 * 60;

const TABLE = 'dashboard_sign_in_limits';
const RULES = {
  pair: { keyPrefix: 'sign-in', points: SIGN_IN_FAILURES_ALLOWED, duration: SIGN_IN_WINDOW_SECONDS },
  account: { keyPrefix: 'sign-in-account', points: ACCOUNT_FAILURES_ALLOWED, duration: ACCOUNT_WINDOW_SECONDS },
  address: { keyPrefix: 'sign-in-address', points: ADDRESS_FAILURES_ALLOWED, duration: ADDRESS_WINDOW_SECONDS },
} as const;
type Rule = keyof typeof RULES;
const RULE_NAMES = Object.keys(RULES) as Rule[];

/** The keys of one attempt's counters, without the store's prefix. */
function keysOf(email: string, ip: string): Record<Rule, string> {
  // Hashed: an e-mail may be longer than the table's key column, and the table need not hold addresses.
  const account = createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
  const address = clientNetwork(ip);
  return { pair: `${account}|${address}`, account, address };
}

/** The rows' keys in the limits table (for tests and operators: deleting one lifts that limit). */
export function signInLimitKeys(email: string, ip: string): Record<Rule, string> {
  const keys = keysOf(email, ip);
  return Object.fromEntries(RULE_NAMES.map((rule) => [rule, `${RULES[rule].keyPrefix}:${keys[rule]}`])) as Record<Rule, string>;
}

/** An IPv4 address as it is; an IPv6 address as its /64. */
export function clientNetwork(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!isIPv6(ip)) return ip;
  const [head, tail] = ip.split('::');
  const groupsOf = (part: string | undefined) =>
    part ? part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])) : [];
  const before = groupsOf(head);
  const after = tail === undefined ? [] : groupsOf(tail);
  const groups = tail === undefined ? before : [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

export class SignInLimiter {
  private readonly limiters: Record<Rule, RateLimiterPostgres>;

  constructor(pool: Pool) {
    const limiter = (rule: Rule) =>
      new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: TABLE,
        tableCreated: true,
        // One limiter sweeping expired rows (every 5 minutes) is enough: they share the table.
        clearExpiredByTimeout: rule === 'pair',
        ...RULES[rule],
      });
    this.limiters = { pair: limiter('pair'), account: limiter('account'), address: limiter('address') };
  }

  /**
   * Takes this attempt's points. Returns 0 when the attempt may go on to verify the password, or
   * the seconds until one is allowed (the attempt is then refused and counts nowhere).
   */
  async admit(email: string, ip: string): Promise<number> {
    const keys = keysOf(email, ip);
    const results = await Promise.allSettled(RULE_NAMES.map((rule) => this.limiters[rule].consume(keys[rule])));
    let waitMs = 0;
    const taken: Rule[] = [];
    results.forEach((result, index) => {
      if (result.status === 'fulfilled') return taken.push(RULE_NAMES[index]);
      // Rejection with a RateLimiterRes means "over the limit"; anything else is a store failure.
      if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
      waitMs = Math.max(waitMs, result.reason.msBeforeNext);
    });
    if (waitMs === 0) return 0;
    await Promise.all(taken.map((rule) => this.limiters[rule].reward(keys[rule])));
    return Math.max(1, Math.ceil(waitMs / 1000));
  }

  /** After the right password: the attempt was not a failure. */
  async succeeded(email: string, ip: string): Promise<void> {
    const keys = keysOf(email, ip);
    await Promise.all([
      this.limiters.pair.delete(keys.pair),
      this.limiters.account.reward(keys.account),
      this.limiters.address.reward(keys.address),
    ]);
  }
}
