// The message catalogs, one per supported language (domain/locale.ts picks which). Each catalog
// holds ICU MessageFormat strings (intl-messageformat); tests render every status × confidence ×
// exception reason in every language, so a missing or broken message fails the suite.
//
// Arguments the messages receive:
// - `when`: { shape: 'single' | 'sameMonth' | 'crossMonth', order: 'dayFirst' | 'monthFirst',
//   minDay, maxDay (numbers), minMonth, maxMonth (month names from Intl.DateTimeFormat for the locale) };
// - every status message: { confidence: 'High' | 'Medium' | 'Low', when: the rendered `when` phrase }.
// Typographic apostrophes (’) are used on purpose: a straight ' is ICU's quoting character.
import type { Catalog } from './catalog.js';
import type { SupportedLocale } from '../locale.js';
import { da } from './da.js';
import { de } from './de.js';
import { en } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { it } from './it.js';
import { nl } from './nl.js';
import { pl } from './pl.js';
import { pt } from './pt.js';
import { sv } from './sv.js';

export const CATALOGS: Readonly<Record<SupportedLocale, Catalog>> = { en, fr, de, es, it, nl, pt, pl, sv, da };
