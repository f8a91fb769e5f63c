// Dashboard passwords: the length policy, argon2id hashing (@node-rs/argon2 with its OWASP-level
// defaults: 19 MiB, 2 passes, 1 lane) and the one-time set-password link the operator CLI prints.
import { hash, verify } from '@node-rs/argon2';
import { z } from 'zod';
import { dashboardBaseUrl, type Config } from '../platform/config.js';

export const PASSWORD_MIN_LENGTH = 12;
// An upper bound keeps a hostile multi-megabyte "password" from costing us anything extra.
export const PASSWORD_MAX_LENGTH = 256;
export const SET_PASSWORD_LINK_TTL_MS = 24 * 3_600_000;

export const passwordSchema = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `Use at least ${PASSWORD_MIN_LENGTH} characters.`)
  .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters.`)
  .refine((text) => text.trim().length > 0, 'A password of spaces only is not allowed.');

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

// Verified when the email is unknown or has no password yet, so every failed sign-in costs the
// same time and the response time does not tell which addresses have accounts.
const DUMMY_HASH = hash('not a real password, only spends the same time');

export async function verifyPassword(passwordHash: string | null | undefined, password: string): Promise<boolean> {
  const ok = await verify(passwordHash ?? (await DUMMY_HASH), password).catch(() => false);
  return ok && Boolean(passwordHash);
}

export function setPasswordUrl(config: Config, token: string): string {
  return `${dashboardBaseUrl(config)}/dashboard/set-password?token=${encodeURIComponent(token)}`;
}
