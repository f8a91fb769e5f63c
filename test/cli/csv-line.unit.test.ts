// One line of a `history import` file as its fields (cli/admin/csv-line.ts): RFC 4180 quoting within
// the line, whitespace around a field trimmed, and a bad quote a reason for that line only.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { splitCsvLine } from '../../cli/admin/csv-line.js';

/** Field text as a file may hold it: no line break, no blank at either end (a field is trimmed). */
const fieldText = fc
  .string({ unit: fc.constantFrom('a', 'Z', '0', '9', ' ', ',', '"', '-', 'é', '\t', ':'), maxLength: 12 })
  .map((text) => text.trim());

/** The field as a writer may put it: quoted (quotes doubled), or bare when it holds no comma or quote. */
const written = (text: string, quoted: boolean) => (quoted || /[",]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

describe('splitCsvLine', () => {
  it('gives back every field of a line written with RFC 4180 quoting, quoted or not, blanks around them or not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fieldText, fc.boolean(), fc.constantFrom('', ' ', '\t ')), { minLength: 1, maxLength: 6 }),
        (fields) => {
          const line = fields.map(([text, quoted, pad]) => `${pad}${written(text, quoted)}${pad}`).join(',');
          expect(splitCsvLine(line)).toEqual(fields.map(([text]) => text));
        },
      ),
    );
  });

  it('answers every line, whatever its quotes, with its fields or a reason, never by throwing', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '1', ',', '"', ' '), maxLength: 30 }), (line) => {
        const result = splitCsvLine(line);
        expect(Array.isArray(result) || typeof result.reason === 'string').toBe(true);
      }),
    );
  });

  it('refuses an unclosed quote, a quote inside a bare field and text after a closing quote', () => {
    expect(splitCsvLine('"102,IS,2026-03-02,2026-03-04')).toEqual({ reason: 'unreadable CSV: the quote opening field 1 is not closed' });
    expect(splitCsvLine('10"4,IS')).toEqual({ reason: 'unreadable CSV: a quote inside the unquoted field 1' });
    expect(splitCsvLine('"10"5,IS')).toEqual({ reason: 'unreadable CSV: text after the closing quote of field 1' });
  });

  it('keeps empty fields, a trailing one included', () => {
    expect(splitCsvLine(',FR,,')).toEqual(['', 'FR', '', '']);
  });
});
