// `issuer create --name NAME`, `issuer list` and `issuer erase` (cli/admin/erasure-commands.ts): the
// organisations (card issuers) that own API keys and dispatches. The id printed here is the one every other command and the Temporal UI's
// `IssuerId` search attribute use.
import type { Command } from 'commander';
import { z } from 'zod';
import { createIssuer, listIssuers } from '../../db/issuers.js';
import { iso, output, parseOptions, table, withDatabase } from './context.js';
import { issuerEraseAction } from './erasure-commands.js';

const createOptions = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
});

export function registerIssuerCommands(program: Command): void {
  const issuer = program.command('issuer').description('manage issuers (the organisations that own keys and dispatches)');

  issuer
    .command('create')
    .description('create an issuer and print its id')
    .requiredOption('--name <name>', "the issuer's display name")
    .action(async (raw: unknown, command: Command) => {
      const { name } = parseOptions(createOptions, raw);
      const created = await withDatabase((db) => createIssuer(db, name));
      output(command, { id: created.id, name: created.name }, () =>
        [`Created issuer "${created.name}": ${created.id}`, `Next: npm run admin -- key create --issuer ${created.id}`].join('\n'),
      );
    });

  issuer
    .command('list')
    .description('list issuers with their number of active keys')
    .action(async (_raw: unknown, command: Command) => {
      const issuers = await withDatabase((db) => listIssuers(db));
      const data = issuers.map((i) => ({ id: i.id, name: i.name, created_at: iso(i.createdAt), active_keys: i.activeKeys }));
      output(command, { data }, () => {
        if (issuers.length === 0) return 'No issuers yet. Create one with: npm run admin -- issuer create --name NAME';
        return table(
          ['ID', 'NAME', 'ACTIVE KEYS', 'CREATED'],
          data.map((i) => [i.id, i.name, String(i.active_keys), i.created_at ?? '']),
        );
      });
    });

  issuer
    .command('erase')
    .description('an issuer that leaves: erase every dispatch of it, then its keys, webhook endpoints, feeds, users and branding')
    .requiredOption('--issuer <id>', 'the issuer id (iss_…)')
    .option('--confirm', 'required: nothing of it can be restored')
    .action(issuerEraseAction);
}
