// A model of Accept-Language for the tracking page's tests (RFC 9110 §12.4.2 and §12.5.4, RFC 4647
// §2.1 and §3.4), written plainly to check domain/tracking-page.ts against, and the headers the
// property tests send: members built from ranges the page offers, does not offer, names in other
// letter cases, with regions, `*`, valid and invalid weights (q=2, q=1.5, q=abc, q=00), empty members
// and any text at all.
import fc from 'fast-check';
import { SUPPORTED_LOCALES } from '../../domain/locale.js';

const MEMBER = /^[ \t]*([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)[ \t]*(?:;[ \t]*[qQ]=(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?))?[ \t]*$/;

/**
 * Each offered language's q under `header`: the highest weight of the ranges whose language (first
 * subtag) it is (`fr-CA` names `fr`, as RFC 4647 lookup would fall back to it), else that of `*`
 * ("every tag not matched by any other range"); absent when nothing names it. A member that is not
 * a language range with at most a valid weight is no member.
 */
export function offeredQualities(header: string): Map<string, number> {
  const ranges = header
    .split(',')
    .map((member) => MEMBER.exec(member))
    .filter((match) => match !== null)
    .map((match) => ({ range: match[1].toLowerCase(), q: match[2] === undefined ? 1 : Number(match[2]) }));
  const qualities = new Map<string, number>();
  for (const language of SUPPORTED_LOCALES) {
    const named = ranges.filter((r) => r.range.split('-')[0] === language).map((r) => r.q);
    const any = ranges.filter((r) => r.range === '*').map((r) => r.q);
    const weights = named.length > 0 ? named : any;
    if (weights.length > 0) qualities.set(language, Math.max(...weights));
  }
  return qualities;
}

/** What the chosen language must be under `header`: the highest-q acceptable one when one is, else never one refused (q=0) if any is not. */
export function expectChoiceFits(header: string, chosen: string): void {
  if (!(SUPPORTED_LOCALES as readonly string[]).includes(chosen)) throw new Error(`${JSON.stringify(header)}: ${chosen} is not offered`);
  const qualities = offeredQualities(header);
  const best = Math.max(0, ...qualities.values());
  if (best > 0 && qualities.get(chosen) !== best) {
    throw new Error(`${JSON.stringify(header)}: chose ${chosen} (q=${qualities.get(chosen)}), not one with q=${best}`);
  }
  const someNotRefused = SUPPORTED_LOCALES.some((language) => qualities.get(language) !== 0);
  if (someNotRefused && qualities.get(chosen) === 0) throw new Error(`${JSON.stringify(header)}: chose ${chosen}, refused with q=0`);
}

const RANGES = ['fr', 'FR', 'fr-CA', 'Fr-ca', 'de-AT', 'DE', 'en', 'EN-gb', 'en-US', 'pt-BR', 'es-419', 'sv', 'da', 'nl', 'it', 'pl',
  '*', 'ja', 'br', 'nb', 'ca', 'zh-Hant-TW', 'x-klingon', 'i-default', 'f', 'toolongtag', '', 'fr_CA', 'de-', '-de']; // prettier-ignore
const WEIGHTS = ['', ';q=1', ';q=0', ';q=0.0', ';q=0.5', ';Q=0.8', ';q=0.001', ';q=1.000', ' ; q=0.3', ';q=2', ';q=1.5', ';q=abc', ';q=00',
  ';q=-1', ';q=.5', ';q=0.1234', ';q=', ';level=1', ';q=0.5;q=0.2', ';q = 0.5']; // prettier-ignore

/** Header values: members of known and odd ranges and weights, or any text an HTTP header can carry. */
export const acceptLanguageHeaders = fc.oneof(
  fc
    .array(fc.tuple(fc.constantFrom(...RANGES), fc.constantFrom(...WEIGHTS)), { maxLength: 8 })
    .chain((members) => fc.constantFrom(', ', ',', ' ,, ').map((comma) => members.map(([range, weight]) => range + weight).join(comma))),
  // Tab, visible ASCII and Latin-1: what node's HTTP client sends as a header value.
  fc.string({ unit: fc.constantFrom('\t', ...Array.from({ length: 0xff - 0x20 + 1 }, (_, i) => String.fromCharCode(0x20 + i)).filter((c) => c !== '\x7f')), maxLength: 60 }), // prettier-ignore
  fc.string({ unit: fc.constantFrom('f', 'r', 'e', 'n', '-', ';', 'q', '=', '0', '1', '.', ',', ' ', '*'), maxLength: 40 }),
);
