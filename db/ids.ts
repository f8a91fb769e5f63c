// The ids of the rows the service creates itself (issuers, keys, webhook endpoints and events,
// dashboard users, tracking links, erasures, tracking feeds): a type prefix and random base62, the shape Stripe's ids have, so
// an id read in a log says what it names. Pure apart from the random bytes; no table.
import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_LENGTH = 16;

/** `<prefix>_` + 16 random base62 characters, e.g. `iss_4kR9wQ2mZp7TxA1c`. */
export type IdPrefix = 'iss' | 'key' | 'whe' | 'evt' | 'usr' | 'tl' | 'er' | 'fd';

export function newId(prefix: IdPrefix): string {
  let out = '';
  while (out.length < ID_LENGTH) {
    for (const byte of randomBytes(ID_LENGTH * 2)) {
      // Rejection sampling keeps the characters uniform (248 = 4 × 62).
      if (byte < 248 && out.length < ID_LENGTH) out += BASE62[byte % 62];
    }
  }
  return `${prefix}_${out}`;
}

/** What `newId(prefix)` makes, as a pattern without anchors (a cursor of that list checks it). */
export function idPattern(prefix: IdPrefix): RegExp {
  return new RegExp(`${prefix}_[0-9A-Za-z]{${ID_LENGTH}}`);
}
