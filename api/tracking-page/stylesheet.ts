// The tracking page's one stylesheet, served by the service itself at STYLESHEET_PATH (no web font,
// no CDN: docs/tracking-page.md "The page"). Mobile first (320 px wide without horizontal scrolling), light and dark
// colour schemes, motion only when the visitor has not asked for less, and logical properties
// (inline/block) so that a right-to-left page would mirror. `--accent` is the issuer's colour, checked
// at 4.5:1 against white (domain/tracking-links.ts), and only ever the background of white text.
// Every colour pair here was checked by axe-core in test/api/tracking-page.browser.test.ts.
import { createHash } from 'node:crypto';

export const STYLESHEET = `:root {
  color-scheme: light dark;
  --accent: #2f4858;
  --bg: #ffffff;
  --fg: #1c1e21;
  --muted: #4a4f57;
  --line: #c9ced6;
  --panel: #f3f5f8;
  --link: #0b57d0;
  --alert-bg: #fdecea;
  --alert-fg: #8a1c12;
  --done: #1e6b3a;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #14171a;
    --fg: #e8eaed;
    --muted: #b4bac3;
    --line: #4a515c;
    --panel: #1f2429;
    --link: #9cc3ff;
    --alert-bg: #3b1714;
    --alert-fg: #ffc9c2;
    --done: #7fd69b;
  }
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0;
  background: var(--bg);
  color: var(--fg);
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 1rem;
  line-height: 1.5;
  overflow-wrap: anywhere;
}
.band { background: var(--accent); color: #ffffff; padding-block: 0.75rem; }
.band .issuer { margin: 0 auto; max-inline-size: 40rem; padding-inline: 1rem; font-weight: 700; font-size: 1.125rem; }
main, footer { margin: 0 auto; max-inline-size: 40rem; padding-inline: 1rem; }
main { padding-block: 1rem 0.5rem; }
h1 { font-size: 1.5rem; line-height: 1.25; margin-block: 0.5rem 1rem; }
h2 { font-size: 1.125rem; margin-block: 1.5rem 0.5rem; }
a { color: var(--link); }
.visually-hidden {
  position: absolute; inline-size: 1px; block-size: 1px; overflow: hidden;
  clip-path: inset(50%); white-space: nowrap;
}
.steps { list-style: none; margin: 0; padding: 0; }
.step { display: flex; align-items: center; gap: 0.75rem; padding-block: 0.375rem; color: var(--muted); }
.step .marker {
  flex: none; inline-size: 1.25rem; block-size: 1.25rem; border-radius: 50%;
  border: 2px solid var(--line); background: var(--bg);
}
.step.done { color: var(--fg); }
.step.done .marker { border-color: var(--done); background: var(--done); }
.step.current { color: var(--fg); font-weight: 700; }
.step.current .marker { border-color: var(--accent); background: var(--accent); box-shadow: 0 0 0 3px var(--bg), 0 0 0 5px var(--accent); }
@media (prefers-color-scheme: dark) {
  .step.current .marker { border-color: var(--fg); box-shadow: 0 0 0 3px var(--bg), 0 0 0 5px var(--fg); }
}
.alert { background: var(--alert-bg); color: var(--alert-fg); border-inline-start: 4px solid currentColor; padding: 0.75rem 1rem; margin-block: 1rem; }
.alert h2 { margin-block: 0 0.25rem; }
.alert p { margin: 0; }
.window { font-size: 1.25rem; font-weight: 700; margin-block: 0.25rem; }
.message { margin-block: 0.5rem 1rem; }
.button {
  display: inline-block; background: var(--accent); color: #ffffff; text-decoration: none;
  font: inherit; font-weight: 700; border: 2px solid transparent; border-radius: 0.5rem;
  padding-block: 0.75rem; padding-inline: 1.25rem; min-block-size: 2.75rem; cursor: pointer;
  transition: filter 150ms ease-in-out;
}
.button:hover { filter: brightness(0.9); }
.button:focus-visible, a:focus-visible, input:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
.timeline { list-style: none; margin: 0; padding: 0; border-inline-start: 2px solid var(--line); }
.timeline li { padding-block: 0.25rem; padding-inline-start: 0.75rem; }
.timeline time { color: var(--muted); display: block; font-size: 0.875rem; }
.updated { color: var(--muted); font-size: 0.875rem; margin-block: 1.5rem 0.5rem; }
.gate label { display: block; font-weight: 700; margin-block: 1rem 0.25rem; }
.gate input {
  display: block; inline-size: 100%; max-inline-size: 16rem; font: inherit; padding: 0.5rem 0.75rem;
  color: var(--fg); background: var(--bg); border: 2px solid var(--muted); border-radius: 0.375rem; margin-block-end: 1rem;
}
.error { color: var(--alert-fg); background: var(--alert-bg); padding: 0.5rem 0.75rem; }
footer { border-block-start: 1px solid var(--line); margin-block-start: 1.5rem; padding-block: 0.75rem 1.5rem; }
.languages { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; margin: 0; padding: 0; }
.languages a, .languages span { display: inline-block; padding-block: 0.25rem; }
.languages span { font-weight: 700; }
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { transition: none !important; animation: none !important; scroll-behavior: auto !important; }
}
`;

/** Named by its content, so browsers may keep it a year and a new deployment's is fetched at once. */
export const STYLESHEET_PATH = `/t/assets/page-${createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 12)}.css`;
