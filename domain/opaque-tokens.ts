// Random bearer tokens that only the holder knows and the database keeps as SHA-256 hashes: the
// dashboard's session ids and one-time set-password tokens. 32 random bytes, base64url, so a
// token is unguessable and a database leak reveals no usable token.
import { createHash, randomBytes } from 'node:crypto';

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function newToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}
