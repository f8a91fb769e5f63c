// `conditions set|list|clear`: carrier delays an operator declares for a country or one of its
// postal prefixes, optionally until a date (docs/admin-cli.md "Operator CLI" and docs/predictions.md "Conditions"). The prediction model
// moves the window of every card to that destination later by the delay while it is in force.
import type { Command } from 'commander';
import { z } from 'zod';
import { clearCarrierConditions, listCarrierConditions, setCarrierCondition, type CarrierCondition } from '../../db/conditions.js';
import { normalisePostalCode, postalPrefixOf } from '../../domain/prediction-model.js';
import { countryCode, isoDate } from '../../domain/field-schemas.js';
import { CliError, iso, output, parseOptions, table, wholeNumberOption, withDatabase } from './context.js';

const setOptions = z
  .object({
    country: countryCode,
    postalPrefix: z.string().trim().min(1, 'must not be empty').optional(),
    delayDays: wholeNumberOption(1, 60),
    // The model applies a delay through its last day (domain/prediction-model.ts): an earlier one
    // would be stored and listed, yet never move a window.
    until: isoDate
      .refine((until) => until >= new Date().toISOString().slice(0, 10), {
        error: (issue) => `${String(issue.input)} is before today (UTC): the delay would never apply`,
      })
      .optional(),
  })
  .transform((o) => ({ ...o, postalPrefix: o.postalPrefix === undefined ? null : normalisePostalCode(o.postalPrefix, o.country) }))
  // The prefix must be one the model derives (domain/prediction-model.ts postalPrefixOf), or it would never match.
  .refine((o) => o.postalPrefix === null || postalPrefixOf(`${o.postalPrefix}000`, o.country) === o.postalPrefix, {
    path: ['postalPrefix'],
    message: 'is not a postal prefix of that country (GB: the outward code; US, CA, IE: 3 characters; elsewhere 2)',
  });
const listOptions = z.object({ all: z.boolean().optional() });
const clearOptions = z
  .object({ id: z.string().trim().min(1).optional(), country: countryCode.optional() })
  .refine((o) => (o.id === undefined) !== (o.country === undefined), { message: 'give exactly one of --id or --country' });

function toJson(c: CarrierCondition) {
  return {
    id: c.id,
    country_code: c.countryCode,
    postal_prefix: c.postalPrefix,
    delay_days: c.delayDays,
    until: c.until,
    created_at: iso(c.createdAt),
    cleared_at: iso(c.clearedAt),
  };
}

function describe(c: CarrierCondition): string {
  const where = c.postalPrefix ? `${c.countryCode} ${c.postalPrefix}*` : c.countryCode;
  return `${c.id}: ${where} +${c.delayDays} business days ${c.until ? `until ${c.until}` : 'until cleared'}`;
}

export function registerConditionsCommands(program: Command): void {
  const conditions = program.command('conditions').description('carrier delays that move predicted delivery windows');

  conditions
    .command('set')
    .description('declare a carrier delay for a country or one of its postal prefixes')
    .requiredOption('--country <cc>', 'destination country (ISO 3166-1 alpha-2)')
    .option('--postal-prefix <prefix>', 'only this postal prefix of the country')
    .requiredOption('--delay-days <n>', 'business days the delay adds')
    .option('--until <date>', 'last day the delay applies (YYYY-MM-DD); default: until cleared')
    .action(async (raw: unknown, command: Command) => {
      const o = parseOptions(setOptions, raw);
      const created = await withDatabase((db) =>
        setCarrierCondition(db, { countryCode: o.country, postalPrefix: o.postalPrefix, delayDays: o.delayDays, until: o.until ?? null }),
      );
      output(command, toJson(created), () => `Set carrier condition ${describe(created)}`);
    });

  conditions
    .command('list')
    .description('list carrier conditions in force (not cleared)')
    .option('--all', 'include cleared conditions')
    .action(async (raw: unknown, command: Command) => {
      const { all } = parseOptions(listOptions, raw);
      const data = (await withDatabase((db) => listCarrierConditions(db, { includeCleared: all }))).map(toJson);
      output(command, { data }, () =>
        data.length === 0
          ? 'No carrier conditions. Declare one with: npm run admin -- conditions set --country CC --delay-days N'
          : table(
              ['ID', 'COUNTRY', 'PREFIX', 'DELAY', 'UNTIL', 'CREATED', 'CLEARED'],
              data.map((c) => [c.id, c.country_code, c.postal_prefix ?? '*', String(c.delay_days), c.until ?? '-', c.created_at ?? '', c.cleared_at ?? '-']), // prettier-ignore
            ),
      );
    });

  conditions
    .command('clear')
    .description('clear one carrier condition (--id) or all of a country (--country)')
    .option('--id <id>', 'the condition id (cnd_…)')
    .option('--country <cc>', 'every condition of this country')
    .action(async (raw: unknown, command: Command) => {
      const o = parseOptions(clearOptions, raw);
      const cleared = await withDatabase((db) => clearCarrierConditions(db, o.id !== undefined ? { id: o.id } : { countryCode: o.country as string })); // prettier-ignore
      if (o.id !== undefined && cleared.length === 0) throw new CliError(`unknown or already cleared carrier condition: ${o.id}`);
      output(command, { data: cleared.map(toJson) }, () =>
        cleared.length === 0 ? 'No carrier conditions to clear' : cleared.map((c) => `Cleared ${describe(c)}`).join('\n'),
      );
    });
}
