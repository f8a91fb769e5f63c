// The tracking page's HTML (docs/tracking-page.md "The page"): the page itself, the postal-code gate, and the ends
// (404, 410, 429, 500), from the plain values of domain/tracking-page.ts. Every interpolated value
// is escaped by `html` (only already-rendered fragments pass as `Raw`). No script anywhere; the one
// stylesheet is the service's own (./stylesheet.ts), and the issuer's accent colour, the only style
// that varies, is an inline <style> allowed by its hash in the CSP (./index.ts). The markup says
// `lang` and `dir`, and the stylesheet uses logical properties, so nothing assumes left-to-right.
import { createHash } from 'node:crypto';
import type { PageCatalog } from '../../domain/locales/catalog.js';
import type { PageLanguage, PageView } from '../../domain/tracking-page.js';
import { STYLESHEET_PATH } from './stylesheet.js';

class Raw {
  constructor(readonly text: string) {}
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * A template's literal parts with each line's indentation dropped (the page has no <pre>, so a
 * newline is as good a separator as a newline and spaces): a quarter fewer bytes to every phone.
 * Done once per template.
 */
const trimmed = new WeakMap<TemplateStringsArray, string[]>();
function literalParts(strings: TemplateStringsArray): string[] {
  let parts = trimmed.get(strings);
  if (!parts) {
    parts = strings.map((part) => part.replace(/\n[ \t]+/g, '\n'));
    trimmed.set(strings, parts);
  }
  return parts;
}

function html(templateStrings: TemplateStringsArray, ...values: unknown[]): Raw {
  const strings = literalParts(templateStrings);
  let out = strings[0];
  values.forEach((value, i) => {
    const parts = Array.isArray(value) ? value : [value];
    for (const part of parts) out += part instanceof Raw ? part.text : part == null || part === false ? '' : escape(String(part));
    out += strings[i + 1];
  });
  return new Raw(out);
}

export interface Rendered {
  body: string;
  /** The CSP source of the inline <style>, when the page has one. */
  styleHash?: string;
}

interface Frame {
  language: PageLanguage;
  title: string;
  /** Shown in the header band; none on a 404 (an unknown token names no issuer). */
  issuerName?: string;
  accentColor?: string | null;
  languages: PageView['languages'];
  languagesLabel: string;
  main: Raw;
}

function layout(frame: Frame): Rendered {
  const accent = frame.accentColor ? `:root{--accent:${frame.accentColor}}` : undefined;
  const head = frame.issuerName ? `${frame.title} · ${frame.issuerName}` : frame.title;
  const body = html`<!doctype html>
    <html lang="${frame.language.locale}" dir="${frame.language.dir}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="color-scheme" content="light dark" />
        <title>${head}</title>
        <link rel="stylesheet" href="${STYLESHEET_PATH}" />
        ${accent ? new Raw(`<style>${accent}</style>`) : ''}
      </head>
      <body>
        <header class="band">
          ${frame.issuerName ? html`<p class="issuer">${frame.issuerName}</p>` : html`<p class="issuer" aria-hidden="true">&nbsp;</p>`}
        </header>
        <main>${frame.main}</main>
        <footer>
          <nav aria-label="${frame.languagesLabel}">
            <ul class="languages">
              ${frame.languages.map((l) =>
                l.current
                  ? html`<li><span lang="${l.language}" aria-current="true">${l.name}</span></li>`
                  : html`<li><a href="?lang=${l.language}" lang="${l.language}" hreflang="${l.language}">${l.name}</a></li>`,
              )}
            </ul>
          </nav>
        </footer>
      </body>
    </html> `.text;
  return { body, styleHash: accent && styleHash(accent) };
}

const styleHashes = new Map<string, string>();

/** The CSP source of an inline style; one per accent colour, so computed once each. */
function styleHash(style: string): string {
  let hash = styleHashes.get(style);
  if (!hash) {
    hash = `'sha256-${createHash('sha256').update(style).digest('base64')}'`;
    if (styleHashes.size < 10_000) styleHashes.set(style, hash);
  }
  return hash;
}

export function renderPage(view: PageView): Rendered {
  const s = view.strings;
  const main = html`<h1>${s.title}</h1>
    ${
      view.exception
        ? html`<div class="alert" role="status">
            <h2>${view.exception.heading}</h2>
            <p>${view.exception.reason}</p>
          </div>`
        : ''
    }
    <section aria-labelledby="status-heading">
      <h2 id="status-heading">${s.statusHeading}</h2>
      <ol class="steps">
        ${view.steps.map(
          (step) =>
            html`<li class="step ${step.state}" ${step.state === 'current' ? new Raw(' aria-current="step"') : ''}>
              <span class="marker" aria-hidden="true"></span><span class="label">${step.label}</span>
              <span class="visually-hidden">(${step.stateText})</span>
            </li>`,
        )}
      </ol>
    </section>
    <section aria-labelledby="window-heading">
      <h2 id="window-heading">${view.window.heading}</h2>
      <p class="window">${view.window.text}</p>
      <p class="message">${view.message}</p>
      ${view.action ? html`<p><a class="button" href="${view.action.href}" rel="noreferrer noopener">${view.action.label}</a></p>` : ''}
    </section>
    <section aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">${s.timelineHeading}</h2>
      ${
        view.timeline.length === 0
          ? html`<p>${s.timelineEmpty}</p>`
          : html`<ol class="timeline">
              ${view.timeline.map((entry) => html`<li><time datetime="${entry.datetime}">${entry.date}</time> <span class="event">${entry.label}</span></li>`)}
            </ol>`
      }
    </section>
    <p class="updated"><time datetime="${view.lastUpdated.datetime}">${view.lastUpdated.text}</time></p>`;
  return layout({ ...frameOf(view), title: s.title, main });
}

const frameOf = (view: Pick<PageView, 'language' | 'strings' | 'issuerName' | 'accentColor' | 'languages'>) => ({
  language: view.language,
  issuerName: view.issuerName,
  accentColor: view.accentColor,
  languages: view.languages,
  languagesLabel: view.strings.languages,
});

export interface GateView extends Pick<PageView, 'language' | 'strings' | 'issuerName' | 'accentColor' | 'languages'> {
  action: string;
  wrong: boolean;
}

export function renderGate(view: GateView): Rendered {
  const s = view.strings;
  const main = html`<h1>${s.title}</h1>
    <form method="post" action="${view.action}" class="gate">
      <p id="gate-intro">${s.gateIntro}</p>
      ${view.wrong ? html`<p class="error" id="gate-error" role="alert">${s.gateWrong}</p>` : ''}
      <label for="postal_code">${s.postalCode}</label>
      <input
        id="postal_code"
        name="postal_code"
        type="text"
        required
        maxlength="16"
        autocomplete="postal-code"
        autocapitalize="characters"
        spellcheck="false"
        aria-describedby="gate-intro${view.wrong ? ' gate-error' : ''}"
        ${view.wrong ? new Raw(' aria-invalid="true"') : ''}
      />
      <button type="submit" class="button">${s.gateSubmit}</button>
    </form>`;
  return layout({ ...frameOf(view), title: s.title, main });
}

export type EndKind = 'not_found' | 'erased' | 'gone' | 'limited' | 'error';

export interface EndView extends Pick<PageView, 'language' | 'strings' | 'languages'> {
  kind: EndKind;
  /** The issuer, on a 410 only: a 404 (erased too) or 429 names none. */
  issuerName?: string;
  accentColor?: string | null;
  support?: { label: string; href: string };
}

const END_TEXT: Record<EndKind, [keyof PageCatalog, keyof PageCatalog]> = {
  not_found: ['notFoundTitle', 'notFoundText'],
  erased: ['erasedTitle', 'erasedText'],
  gone: ['goneTitle', 'goneText'],
  limited: ['limitedTitle', 'limitedText'],
  error: ['errorTitle', 'errorText'],
};

export function renderEnd(view: EndView): Rendered {
  const [titleKey, textKey] = END_TEXT[view.kind];
  const title = view.strings[titleKey] as string;
  const main = html`<h1>${title}</h1>
    <p>${view.strings[textKey] as string}</p>
    ${view.support ? html`<p><a class="button" href="${view.support.href}" rel="noreferrer noopener">${view.support.label}</a></p>` : ''}`;
  return layout({
    language: view.language,
    title,
    issuerName: view.issuerName,
    accentColor: view.accentColor,
    languages: view.languages,
    languagesLabel: view.strings.languages,
    main,
  });
}
