// The admin CLI's numeric options given something that is not a number (docs/admin-cli.md): the
// real `tsx cli/admin.ts` subprocess stops with one line naming the option and its range, as for
// any other bad option (cli/admin/context.ts wholeNumberOption), not zod's "must be a number, not
// NaN" (the value coerced from the text). The options are checked before anything is reached, so
// no database or Temporal is given.
import { describe, it } from '@jest/globals';
import { expectOneLineFailure, runCli } from '../support/cli.js';

describe('a numeric option of the admin CLI given text', () => {
  it.each([
    ['retention run --batch-size', ['retention', 'run', '--batch-size', 'abc'], '--batch-size 1–10000'],
    ['deliveries list --limit', ['deliveries', 'list', '--limit', 'abc'], '--limit 1–1000'],
    ['conditions set --delay-days', ['conditions', 'set', '--country', 'FR', '--delay-days', 'abc'], '--delay-days 1–60'],
  ])(
    '%s fails with one line naming the option and its range',
    async (_, args, rule) => {
      const [option, range] = rule.split(' ');
      expectOneLineFailure(await runCli(args, {}), new RegExp(`^error: invalid ${option}: must be a whole number ${range}$`));
    },
    60_000,
  );
});
