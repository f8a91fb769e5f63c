// One line of a `history import` file as its fields (cli/admin/history-commands.ts): comma-separated,
// each field optionally in double quotes (RFC 4180: a comma inside quotes is text, "" is a quote),
// the whitespace around a field trimmed. A row of that file never spans lines (postal codes and dates
// hold no line break), so a file is read line by line and a stray or unclosed quote costs only its
// own line: a parser that lets a quoted field run on would swallow every row after it into one
// refused "row", and report it at the line where the file ends.

/** The line's fields, or why they cannot be read. */
export function splitCsvLine(line: string): string[] | { reason: string } {
  const fields: string[] = [];
  let at = 0;
  for (;;) {
    while (at < line.length && isBlank(line[at])) at += 1;
    if (line[at] === '"') {
      // A quoted field: up to the quote that is not doubled, then only blanks before the comma.
      let value = '';
      let end = at + 1;
      for (;;) {
        const quote = line.indexOf('"', end);
        if (quote < 0) return { reason: `unreadable CSV: the quote opening field ${fields.length + 1} is not closed` };
        value += line.slice(end, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          end = quote + 2;
          continue;
        }
        at = quote + 1;
        break;
      }
      while (at < line.length && isBlank(line[at])) at += 1;
      if (at < line.length && line[at] !== ',')
        return { reason: `unreadable CSV: text after the closing quote of field ${fields.length + 1}` };
      fields.push(value.trim());
    } else {
      const comma = line.indexOf(',', at);
      const value = line.slice(at, comma < 0 ? line.length : comma);
      if (value.includes('"')) return { reason: `unreadable CSV: a quote inside the unquoted field ${fields.length + 1}` };
      fields.push(value.trim());
      at = comma < 0 ? line.length : comma;
    }
    if (at >= line.length) return fields;
    at += 1; // the comma
  }
}

function isBlank(char: string): boolean {
  return char === ' ' || char === '\t';
}
