// `key create`, `key list` and `key revoke`: an issuer's API keys. A new key is printed exactly once
// and only its lookup prefix and hash are stored, so a lost key is revoked and replaced, never
// recovered. Revocation reaches every API process within its key cache TTL (≤ 5 s, docs/http-contract.md).
import type { Command } from 'commander';
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../../db/issuers.js';
import { parseScopes, SCOPES, type Scope } from '../../domain/api-keys.js';
import { CliError, iso, issuerRefusal, output, parseOptions, table, withDatabase } from './context.js';

const scopesOption = z
  .string()
  .optional()
  .transform((text, ctx): Scope[] => {
    if (text === undefined) return [...SCOPES];
    try {
      const scopes = parseScopes(text);
      if (scopes.length === 0) throw new Error(`give at least one scope (known: ${SCOPES.join(', ')})`);
      return scopes;
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });

const createOptions = z.object({
  issuer: z.string().trim().min(1, 'must not be empty'),
  scopes: scopesOption,
  test: z.boolean().optional(),
});
const listOptions = z.object({ issuer: z.string().trim().min(1, 'must not be empty') });
const revokeOptions = z.object({ keyId: z.string().trim().min(1, 'must not be empty') });

export function registerKeyCommands(program: Command): void {
  const key = program.command('key').description("manage an issuer's API keys");

  key
    .command('create')
    .description('create an API key and print it (shown only this once)')
    .requiredOption('--issuer <id>', 'the issuer the key belongs to')
    .option('--scopes <list>', `comma-separated scopes (default: all of ${SCOPES.join(',')})`)
    .option('--test', 'a test-mode key (cds_test_…): sees and creates only test-mode dispatches')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(createOptions, raw);
      const mode = options.test ? 'test' : 'live';
      const created = await withDatabase((db) => createApiKey(db, { issuerId: options.issuer, scopes: options.scopes, mode }));
      if (!created) throw await withDatabase((db) => issuerRefusal(db, options.issuer));
      output(command, { id: created.id, key: created.key, issuer_id: created.issuerId, scopes: created.scopes, mode: created.mode }, () =>
        [
          `Created ${created.mode} API key ${created.id} for issuer ${created.issuerId}`,
          `scopes: ${created.scopes.join(', ')}`,
          '',
          `  ${created.key}`,
          '',
          'Store this key now: it is shown only once and cannot be recovered.',
        ].join('\n'),
      );
    });

  key
    .command('list')
    .description("list an issuer's keys (prefixes only, never the keys)")
    .requiredOption('--issuer <id>', 'the issuer whose keys to list')
    .action(async (raw: unknown, command: Command) => {
      const { issuer } = parseOptions(listOptions, raw);
      const keys = await withDatabase((db) => listApiKeys(db, issuer));
      if (!keys) throw new CliError(`unknown issuer: ${issuer}`);
      const data = keys.map((k) => ({
        id: k.id,
        issuer_id: k.issuerId,
        prefix: k.prefix,
        scopes: k.scopes,
        mode: k.mode,
        created_at: iso(k.createdAt),
        revoked_at: iso(k.revokedAt),
        last_used_at: iso(k.lastUsedAt),
      }));
      output(command, { data }, () => {
        if (keys.length === 0) return `Issuer ${issuer} has no keys. Create one with: npm run admin -- key create --issuer ${issuer}`;
        return table(
          ['ID', 'PREFIX', 'MODE', 'SCOPES', 'CREATED', 'REVOKED', 'LAST USED'],
          data.map((k) => [
            k.id,
            `${k.prefix}…`,
            k.mode,
            k.scopes.join(','),
            k.created_at ?? '',
            k.revoked_at ?? '-',
            k.last_used_at ?? 'never',
          ]),
        );
      });
    });

  key
    .command('revoke')
    .description('revoke an API key (idempotent)')
    .requiredOption('--key-id <id>', 'the id of the key (key_…), as `key list` shows it')
    .action(async (raw: unknown, command: Command) => {
      const { keyId } = parseOptions(revokeOptions, raw);
      const revoked = await withDatabase((db) => revokeApiKey(db, keyId));
      if (!revoked) throw new CliError(`unknown key: ${keyId}`);
      const at = revoked.revokedAt.toISOString();
      output(command, { id: revoked.id, revoked_at: at }, () =>
        revoked.alreadyRevoked ? `Key ${revoked.id} was already revoked at ${at}` : `Revoked key ${revoked.id} at ${at}`,
      );
    });
}
