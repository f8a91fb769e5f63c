// `history import FILE.csv`: loads past deliveries into the transit history the prediction model
// learns from (docs/predictions.md). The file (header `postal_code,country_code,dispatch_date,
// delivered_date`) is streamed line by line (cli/admin/csv-line.ts) into one COPY, so its size does not matter;
// each row's transit is counted in business days of its destination country. The dates are ISO 8601
// dates or timestamps (the API's own format), a timestamp counting as its UTC calendar date as the
// service's own deliveries do. A refused row is reported by its line number and reason on stderr;
// every other row is imported, and the command exits non-zero unless --allow-errors (docs/predictions.md "History and its bounds").
import { MultiBar, Presets } from 'cli-progress';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { copyTransitHistory, type TransitRecord } from '../../db/transit-history.js';
import { businessDayOnOrAfter, businessDaysBetween, utcDateOf } from '../../domain/calendar.js';
import { countryCode, isoDate, isoTimestamp } from '../../domain/field-schemas.js';
import { CliError, output, withDatabase } from './context.js';
import { splitCsvLine } from './csv-line.js';

const HEADER = ['postal_code', 'country_code', 'dispatch_date', 'delivered_date'] as const;
type CsvRecord = Partial<Record<(typeof HEADER)[number], string>>;

export interface ImportSummary {
  imported: number;
  skipped: number;
  errors: Array<{ line: number; reason: string }>;
}

/** Country codes seen so far → the code as stored, or null when refused (domain/field-schemas.ts countryCode). */
const knownCountries = new Map<string, string | null>();

function checkCountry(code: string): string | null {
  if (!knownCountries.has(code)) {
    const parsed = countryCode.safeParse(code);
    knownCountries.set(code, parsed.success ? parsed.data : null);
  }
  return knownCountries.get(code) ?? null;
}

/**
 * Calendar days from dispatch to delivery beyond which a row is refused: no card is still on its way
 * after four months, so such a row is a typing error or a lost card found again, not a transit time
 * (and counting business days across centuries would stall the import).
 */
export const MAX_TRANSIT_CALENDAR_DAYS = 120;

/** A YYYY-MM-DD date as given, or the UTC calendar date of an ISO 8601 timestamp; null for anything else. */
function calendarDateOf(value: string): string | null {
  if (isoDate.safeParse(value).success) return value;
  return isoTimestamp.safeParse(value).success ? utcDateOf(value) : null;
}

/** The row as a transit record, or why it cannot be one. */
export function toTransitRecord(record: CsvRecord): TransitRecord | { reason: string } {
  for (const field of HEADER) if (!record[field]) return { reason: `missing ${field}` };
  const { postal_code: postalCode } = record as Required<CsvRecord>;
  const country = checkCountry(record.country_code as string);
  if (!country) return { reason: `unknown country_code "${record.country_code}"` };
  if (postalCode.length > 16) return { reason: 'postal_code longer than 16 characters' };
  const dispatchDate = calendarDateOf(record.dispatch_date as string);
  if (!dispatchDate) return { reason: `dispatch_date "${record.dispatch_date}" is not an ISO 8601 date or timestamp` };
  const deliveredDate = calendarDateOf(record.delivered_date as string);
  if (!deliveredDate) return { reason: `delivered_date "${record.delivered_date}" is not an ISO 8601 date or timestamp` };
  if (deliveredDate < dispatchDate)
    return { reason: `delivered_date ${deliveredDate} is before dispatch_date ${dispatchDate} (UTC dates)` };
  const calendarDays = (Date.parse(deliveredDate) - Date.parse(dispatchDate)) / 86_400_000;
  if (calendarDays > MAX_TRANSIT_CALENDAR_DAYS)
    return { reason: `transit of ${calendarDays} days is implausible (more than ${MAX_TRANSIT_CALENDAR_DAYS})` };
  // Counted like a prediction: from the first business day on or after dispatch (mail handed over
  // on a Saturday starts moving on Monday), in the destination country's business days.
  const businessDays = businessDaysBetween(businessDayOnOrAfter(dispatchDate, country), deliveredDate, country);
  return { postalCode, countryCode: country, dispatchDate, deliveredDate, businessDays };
}

/**
 * The file's lines with their numbers (from 1), ended by LF, CRLF or CR, without a byte order mark.
 * A CR at the end of a chunk waits for the next one, which may begin with its LF.
 */
async function* linesOf(chunks: AsyncIterable<string | Buffer>): AsyncIterable<{ text: string; line: number }> {
  let rest = '';
  let line = 0;
  for await (const chunk of chunks) {
    const parts = (rest + String(chunk)).split(/\r\n|\n|\r(?!$)/);
    rest = parts.pop()!;
    for (const text of parts) yield { text: line === 0 ? text.replace(/^\uFEFF/, '') : text, line: ++line };
  }
  const last = rest.replace(/\r$/, '');
  if (last !== '') yield { text: line === 0 ? last.replace(/^\uFEFF/, '') : last, line: line + 1 };
}

async function importFile(file: string): Promise<ImportSummary> {
  const unreadable = (error: NodeJS.ErrnoException) =>
    new CliError(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.code === 'EISDIR' ? 'is a directory' : error.message}`); // prettier-ignore
  const size = await stat(file).then(
    (s) => {
      if (s.isDirectory()) throw unreadable(Object.assign(new Error('is a directory'), { code: 'EISDIR' }));
      return s.size;
    },
    (error: NodeJS.ErrnoException) => {
      throw unreadable(error);
    },
  );
  const errors: ImportSummary['errors'] = [];
  // A progress bar only for a person watching a terminal; never in a pipe or a log.
  const bars = process.stderr.isTTY ? new MultiBar({ stream: process.stderr, hideCursor: true, format: 'history import [{bar}] {percentage}% | {rows} rows | {eta}s left' }, Presets.shades_classic) : null; // prettier-ignore
  const bar = bars?.create(size, 0, { rows: 0 });
  const report = (line: number, reason: string) => {
    errors.push({ line, reason });
    const text = `line ${line}: ${reason}, skipped\n`;
    if (bars) bars.log(text);
    else process.stderr.write(text);
  };
  const missingHeader = () => new CliError(`${file}: the first line must be the header ${HEADER.join(',')}`);
  const input = createReadStream(file, { encoding: 'utf8' });
  let rows = 0;
  // Line by line (cli/admin/csv-line.ts): a bad quote costs its own line, and every refused row is
  // reported by its own line, in order. Blank lines are skipped; the first other line is the header.
  async function* valid(): AsyncIterable<TransitRecord> {
    let sawHeader = false;
    for await (const { text, line } of linesOf(input)) {
      if (text.trim() === '') continue;
      const fields = splitCsvLine(text);
      if (!sawHeader) {
        if ('reason' in fields || HEADER.some((name, i) => fields[i] !== name)) throw missingHeader();
        sawHeader = true;
        continue;
      }
      rows += 1;
      if (bar && rows % 5_000 === 0) bar.update(input.bytesRead, { rows });
      if ('reason' in fields) {
        report(line, fields.reason);
        continue;
      }
      const row = toTransitRecord(Object.fromEntries(HEADER.map((name, i) => [name, fields[i]])));
      if ('reason' in row) report(line, row.reason);
      else yield row;
    }
    // An empty file (or one of blank lines) has no header either.
    if (!sawHeader) throw missingHeader();
  }
  try {
    const imported = await withDatabase((db) => copyTransitHistory(db, valid())).catch((error: NodeJS.ErrnoException) => {
      // A file that cannot be read after all (its read fails): the one-line reason, not a stack.
      throw typeof error.syscall === 'string' && error.syscall === 'read' ? unreadable(error) : error;
    });
    bar?.update(size, { rows });
    return { imported, skipped: errors.length, errors };
  } finally {
    bars?.stop();
  }
}

export function registerHistoryCommands(program: Command): void {
  const history = program.command('history').description('transit history the delivery prediction learns from');

  history
    .command('import')
    .description('import past deliveries from a CSV file (postal_code,country_code,dispatch_date,delivered_date)')
    .argument('<file>', 'CSV file with a header row; dates as YYYY-MM-DD or ISO 8601 timestamps')
    .option('--allow-errors', 'exit 0 even when rows were refused (they are still listed)')
    .action(async (file: string, options: { allowErrors?: boolean }, command: Command) => {
      const summary = await importFile(file);
      output(command, summary, () =>
        summary.skipped === 0
          ? `Imported ${summary.imported} deliveries from ${file}`
          : `Imported ${summary.imported} deliveries from ${file}; skipped ${summary.skipped} bad rows (listed above by line number)`,
      );
      // The summary is printed either way; a partial import is a failure unless the operator accepts it.
      if (summary.skipped > 0 && !options.allowErrors) {
        const rows = (n: number) => `${n} ${n === 1 ? 'row' : 'rows'}`;
        process.stderr.write(
          `error: ${rows(summary.skipped)} refused (listed above by line number); the ${summary.imported} valid ${summary.imported === 1 ? 'row was' : 'rows were'} imported: import only the refused rows again once fixed (the whole file again would import the valid ones twice), or pass --allow-errors to accept a partial import\n`,
        );
        process.exitCode = 1;
      }
    });
}
