// `user create --issuer ID --email E`: a dashboard user of one issuer, and the one-time link with
// which they choose their password (valid 24 hours; only its hash is stored). `user reset-password
// --email E`: the password, the sessions and any earlier link end at once, and a new link is
// printed. The link's base is DASHBOARD_BASE_URL, else the running `npm start`'s dashboard (whose
// database this command uses), else the API's http://localhost:PORT.
import type { Command } from 'commander';
import { z } from 'zod';
import { createDashboardUser, EmailTakenError, resetDashboardPassword, type DashboardUser } from '../../db/dashboard.js';
import { SET_PASSWORD_LINK_TTL_MS, setPasswordUrl } from '../../dashboard/passwords.js';
import { loadConfig, type Config } from '../../platform/config.js';
import { CliError, issuerRefusal, output, parseOptions, runningDashboardUrl, withDatabase } from './context.js';

const email = z.email('must be an email address').trim().max(320);
const createOptions = z.object({ issuer: z.string().trim().min(1, 'must not be empty'), email });
const resetOptions = z.object({ email });

/** The configuration, with the running `npm start`'s dashboard as the links' base when nothing else names one. */
function linkConfig(): Config {
  const running = runningDashboardUrl();
  return loadConfig(running ? { ...process.env, DASHBOARD_BASE_URL: running } : process.env);
}

/** Both commands print the user and their link: `{ id, email, issuer_id, set_password_url }` with --json. */
function printLink(command: Command, config: Config, user: DashboardUser, token: string, headline: string): void {
  const url = setPasswordUrl(config, token);
  output(command, { id: user.id, email: user.email, issuer_id: user.issuerId, set_password_url: url }, () =>
    [headline, '', `  ${url}`, '', 'Send this link to the user: it sets their password, works once and expires in 24 hours.'].join('\n'),
  );
}

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description("manage an issuer's dashboard users");

  user
    .command('create')
    .description('create a dashboard user and print their one-time set-password link')
    .requiredOption('--issuer <id>', 'the issuer the user belongs to')
    .requiredOption('--email <address>', "the user's email address (their sign-in name)")
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(createOptions, raw);
      // Read first: a bad DASHBOARD_BASE_URL must stop the command before it changes anything.
      const config = linkConfig();
      const created = await withDatabase((db) =>
        createDashboardUser(db, { issuerId: options.issuer, email: options.email, tokenTtlMs: SET_PASSWORD_LINK_TTL_MS }),
      ).catch((error: unknown) => {
        throw error instanceof EmailTakenError ? new CliError(`a dashboard user with email ${options.email.toLowerCase()} exists`) : error;
      });
      if (!created) throw await withDatabase((db) => issuerRefusal(db, options.issuer));
      const { user: made, token } = created;
      printLink(command, config, made, token, `Created dashboard user ${made.id} (${made.email}) for issuer ${made.issuerId}`);
    });

  user
    .command('reset-password')
    .description("end a dashboard user's password and sessions, and print a new one-time set-password link")
    .requiredOption('--email <address>', "the user's email address")
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(resetOptions, raw);
      const config = linkConfig();
      const reset = await withDatabase((db) => resetDashboardPassword(db, { email: options.email, tokenTtlMs: SET_PASSWORD_LINK_TTL_MS }));
      if (!reset) throw new CliError(`no dashboard user with email ${options.email.toLowerCase()}`);
      const { user: target, token } = reset;
      printLink(
        command,
        config,
        target,
        token,
        `Reset the password of ${target.id} (${target.email}): their sessions and earlier links have ended`,
      );
    });
}
