// The admin CLI's numeric options given something that is not a number (docs/admin-cli.md): the
// real `tsx cli/admin.ts` subprocess stops with one line naming the option and what it must be, as
// for any other bad option (cli/admin/context.ts parseOptions), not zod's "must be a number, not
// NaN" (the value coerced from the text). The options are checked before anything is reached, so
// no database or Temporal is given.
import { describe, it } from '@jest/globals';
import { expectOneLineFailure, runCli } from '../support/cli.js';

describe('a numeric option of the admin CLI given text', () => {
  it.each([
    ['retention run --batch-size', ['retention', 'run', '--batch-size', 'abc'], '--batch-size'],
    ['deliveries list --limit', ['deliveries', 'list', '--limit', 'abc'], '--limit'],
    ['conditions set --delay-days', ['conditions', 'set', '--country', 'FR', '--delay-days', 'abc'], '--delay-days'],
  ])(
    '%s fails with one line naming the option: must be a number',
    async (_, args, option) => {
      expectOneLineFailure(await runCli(args, {}), new RegExp(`^error: invalid ${option}: must be a number$`));
    },
    60_000,
  );
});
