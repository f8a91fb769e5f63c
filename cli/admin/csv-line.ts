// One line of a `history import` file as its fields (cli/admin/history-commands.ts), parsed by
// csv-parse: comma-separated, each field optionally in double quotes (RFC 4180: a comma inside quotes
// is text, "" is a quote), the whitespace around a field trimmed. A row of that file never spans
// lines (postal codes and dates hold no line break), so the file is read line by line and each line
// parsed alone: a stray or unclosed quote costs only its own line, where a parser given the whole
// file lets a quoted field run on, swallows every row after it into one refused "row", and reports it
// at the line where the file ends.
import { CsvError, parse } from 'csv-parse/sync';

/** The line's fields, or why they cannot be read. */
export function splitCsvLine(line: string): string[] | { reason: string } {
  try {
    const [fields] = parse(line, { trim: true, relax_column_count: true }) as string[][];
    return fields ?? [''];
  } catch (error) {
    return { reason: `unreadable CSV: ${describe(error)}` };
  }
}

function describe(error: unknown): string {
  if (!(error instanceof CsvError)) return error instanceof Error ? error.message : String(error);
  const field = Number(error.index ?? 0) + 1; // the context csv-parse gives: the field's index in the line
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `the quote opening field ${field} is not closed`;
    case 'INVALID_OPENING_QUOTE':
      return `a quote inside the unquoted field ${field}`;
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return `text after the closing quote of field ${field}`;
    default:
      return error.message;
  }
}
