// Message tables reviewed once: every status × confidence × exception reason, rendered in every
// language for fixed windows, must equal the committed table of that language
// (test/domain/message-tables/<language>.md), which a native reader has checked line by line.
// A catalog or Intl change that alters any message fails here and shows the diff.
//
// Regenerate after an intended change, then review the diff of the .md files before committing:
//   UPDATE_MESSAGE_TABLES=1 NODE_OPTIONS=--experimental-vm-modules npx jest test/domain/message-tables.unit.test.ts
import { describe, it, expect } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderSuggestion, SUPPORTED_LOCALES } from '../../domain/messages.js';
import { CONFIDENCE_LEVELS, DISPATCH_STATUSES, EXCEPTION_REASONS, SERVICE_EXCEPTION_REASONS } from '../../domain/vocabulary.js';

/** The window shapes a message can take; the last one shows "1st" forms and Italian elision. */
const WINDOWS = [
  { label: 'same month, 24–26 Nov 2026', window: { min: '2026-11-24', max: '2026-11-26' } },
  { label: 'single day, 24 Nov 2026', window: { min: '2026-11-24', max: '2026-11-24' } },
  { label: 'across months, 30 Nov–2 Dec 2026', window: { min: '2026-11-30', max: '2026-12-02' } },
  { label: 'first of the month, 1–8 Dec 2026', window: { min: '2026-12-01', max: '2026-12-08' } },
] as const;

function tableFor(language: string): string {
  const lines = [
    `# Message table: ${language}`,
    '',
    `Rendered with \`?locale=${language}\` by test/domain/message-tables.unit.test.ts. Reviewed line by line;`,
    'regenerate with `UPDATE_MESSAGE_TABLES=1` (see the test) and review the diff.',
    '',
    'Windows: ' + WINDOWS.map(({ label }, index) => `(${index + 1}) ${label}`).join('; ') + '.',
  ];
  for (const status of DISPATCH_STATUSES) {
    for (const reason of status === 'exception' ? [...EXCEPTION_REASONS, ...SERVICE_EXCEPTION_REASONS] : [undefined]) {
      for (const confidence of CONFIDENCE_LEVELS) {
        lines.push('', `## ${status}${reason ? ` · ${reason}` : ''} · ${confidence}`, '');
        const texts = WINDOWS.map(
          ({ window }) =>
            renderSuggestion({ status, window, confidence, exceptionReason: reason, requestedLocale: language, countryCode: 'ZZ' })
              .recommended_message,
        );
        // A message that does not mention the window is listed once.
        if (new Set(texts).size === 1) lines.push(`- (any window) ${texts[0]}`);
        else texts.forEach((text, index) => lines.push(`- (${index + 1}) ${text}`));
      }
    }
  }
  return lines.join('\n') + '\n';
}

const tablePath = (language: string) => fileURLToPath(new URL(`./message-tables/${language}.md`, import.meta.url));

describe('message tables', () => {
  for (const language of SUPPORTED_LOCALES) {
    it(`renders every ${language} message exactly as in the reviewed table`, () => {
      const rendered = tableFor(language);
      if (process.env.UPDATE_MESSAGE_TABLES === '1') writeFileSync(tablePath(language), rendered);
      expect(rendered).toBe(readFileSync(tablePath(language), 'utf8'));
    });
  }
});
