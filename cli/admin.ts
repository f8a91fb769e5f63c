// The operator CLI (`npm run admin -- <command>`, docs/admin-cli.md "Operator CLI"): issuers, API keys, dashboard users, webhook endpoints and deliveries, one
// module per command group under cli/admin/. It works on the database of the running service
// (DATABASE_URL, or the embedded Postgres that `npm start` started) and never migrates it.
// `--json` prints exactly one JSON document on stdout (use `npm run -s admin` so npm's own banner
// stays out of it); a failure exits 1 with a one-line reason on stderr.
import { Command } from 'commander';
import { describeFailure } from './admin/context.js';
import { registerIssuerCommands } from './admin/issuer-commands.js';
import { registerKeyCommands } from './admin/key-commands.js';
import { registerWebhookCommands } from './admin/webhook-commands.js';
import { registerDeliveryCommands } from './admin/delivery-commands.js';
import { registerHistoryCommands } from './admin/history-commands.js';
import { registerConditionsCommands } from './admin/conditions-commands.js';
import { registerUserCommands } from './admin/user-commands.js';
import { registerPredictionCommands } from './admin/prediction-commands.js';
import { registerRetentionCommands } from './admin/retention-commands.js';
import { registerErasureCommands } from './admin/erasure-commands.js';

// A reader that stops early (`| head`) closes the pipe while the output is still being written: what
// it did not read is not a failure of the command, which has done its work by the time it prints.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  process.stderr.write(`error: cannot write the output: ${error.message}\n`);
  process.exit(1);
});

const program = new Command('admin')
  .description('Card Delivery Status Service: operator commands')
  .option('--json', 'print exactly one JSON document on stdout (snake_case fields)')
  .configureHelp({ showGlobalOptions: true })
  // A failure is one line on stderr: commander's suggestion ("(Did you mean create?)") joins it.
  .configureOutput({ outputError: (text, write) => write(`${text.trimEnd().replaceAll('\n', ' ')}\n`) })
  .showSuggestionAfterError();

registerIssuerCommands(program);
registerKeyCommands(program);
registerUserCommands(program);
registerWebhookCommands(program);
registerDeliveryCommands(program);
registerHistoryCommands(program);
registerConditionsCommands(program);
registerPredictionCommands(program);
registerRetentionCommands(program);
registerErasureCommands(program);

// Commander answers a missing command (`admin`, `admin dispatch`) with the whole usage on stderr;
// a failure is one line, naming what to choose from. `--help` itself still prints the usage.
program.on('beforeAllHelp', ({ error, command }: { error: boolean; command: Command }) => {
  if (!error) return;
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  const choices = command.commands.map((c) => c.name()).join(', ');
  const path = names.join(' ');
  command.error(
    `error: missing command: ${path ? `${path} needs ` : ''}one of ${choices} (npm run admin -- ${path ? `${path} ` : ''}--help)`,
  );
});

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`error: ${describeFailure(error)}\n`);
  process.exitCode = 1;
}
