// `user create --issuer ID --email E`: a dashboard user of one issuer, and the one-time link with
// which they choose their password (valid 24 hours; only its hash is stored). The link's base is
// DASHBOARD_BASE_URL, else the API's http://localhost:PORT.
import type { Command } from 'commander';
import { z } from 'zod';
import { createDashboardUser, EmailTakenError } from '../../db/dashboard-users.js';
import { SET_PASSWORD_LINK_TTL_MS, setPasswordUrl } from '../../dashboard/passwords.js';
import { loadConfig } from '../../platform/config.js';
import { CliError, output, parseOptions, withDatabase } from './context.js';

const createOptions = z.object({
  issuer: z.string().trim().min(1, 'must not be empty'),
  email: z.email('must be an email address').trim().max(320),
});

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description("manage an issuer's dashboard users");

  user
    .command('create')
    .description('create a dashboard user and print their one-time set-password link')
    .requiredOption('--issuer <id>', 'the issuer the user belongs to')
    .requiredOption('--email <address>', "the user's email address (their sign-in name)")
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(createOptions, raw);
      const config = loadConfig();
      const created = await withDatabase((db) =>
        createDashboardUser(db, { issuerId: options.issuer, email: options.email, tokenTtlMs: SET_PASSWORD_LINK_TTL_MS }),
      ).catch((error: unknown) => {
        throw error instanceof EmailTakenError ? new CliError(`a dashboard user with email ${options.email.toLowerCase()} exists`) : error;
      });
      if (!created) throw new CliError(`unknown issuer: ${options.issuer}`);
      const url = setPasswordUrl(config, created.token);
      output(command, { id: created.user.id, email: created.user.email, issuer_id: created.user.issuerId, set_password_url: url }, () =>
        [
          `Created dashboard user ${created.user.id} (${created.user.email}) for issuer ${created.user.issuerId}`,
          '',
          `  ${url}`,
          '',
          'Send this link to the user: it sets their password, works once and expires in 24 hours.',
        ].join('\n'),
      );
    });
}
