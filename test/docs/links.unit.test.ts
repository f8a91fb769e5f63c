// The docs stay true and readable: in every page of docs/ and in the README (and the READMEs beside
// the code), every relative link reaches a file and every #anchor a heading of its page; every
// cited `path/file.ts` (or .js, .sql, .yaml, …) exists; no page is over 25 KB and the README under
// 12 KB, still showing its two command lines and the tour. In the code, every citation of a page by
// heading (docs/x.md "Heading") or anchor (docs/x.md#anchor) names one the page has.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const DOCS = readdirSync(path.join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const READMES = [
  'README.md',
  'deploy/README.md',
  'deploy/helm/card-delivery/README.md',
  'bench/README.md',
  'consumer-kit/README.md',
  'packages/client/README.md',
];
const PAGES = [...DOCS, ...READMES];

/** A page's text outside fenced code blocks. */
const prose = (text: string) => text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
const anchorsOf = (file: string) => new Set([...prose(read(file)).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));

/** Folders and files at the top of the repository: a cited path must start with one to be checked. */
const TOP = new Set(readdirSync(ROOT).filter((name) => !name.startsWith('.') && name !== 'node_modules' && name !== 'dist'));

describe('every page of docs/ and the READMEs', () => {
  it.each(PAGES)('%s: every relative link reaches a file, and every #anchor a heading', (page) => {
    const links = [...prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((target) => !/^[a-z]+:/.test(target));
    const broken = links.filter((target) => {
      const [file, anchor] = target.split('#');
      const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      if (resolved.startsWith('../')) return false; // beside the repository (the specification)
      if (!existsSync(path.join(ROOT, resolved))) return true;
      return anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor);
    });
    expect(broken).toEqual([]);
  });

  it.each(PAGES)('%s: every cited file of the repository exists', (page) => {
    const cited = [...read(page).matchAll(/`([\w.-]+(?:\/[\w.-]+)+\.(?:ts|js|mjs|json|sql|ya?ml|md|sh|py|tpl))`/g)].map((m) => m[1]);
    const missing = cited.filter((file) => TOP.has(file.split('/')[0]) && !file.startsWith('dist/') && !existsSync(path.join(ROOT, file)));
    expect(missing).toEqual([]);
  });

  it.each(DOCS)('%s is not over 25 KB', (page) => {
    expect(statSync(path.join(ROOT, page)).size).toBeLessThanOrEqual(25 * 1024);
  });

  it('has a README under 12 KB that shows the two command lines and the tour', () => {
    const readme = read('README.md');
    expect(Buffer.byteLength(readme)).toBeLessThan(12 * 1024);
    const commands = [...readme.matchAll(/^```sh\n([^`]*?)```$/gm)].map((m) => m[1].trim());
    expect(commands.slice(0, 2)).toEqual(['npm install && npm start', 'npm test']);
    expect(readme).toMatch(/^## A five-minute tour$/m);
  });
});

describe('citations of the docs in the code', () => {
  /** Text files of the repository that may cite a page: sources, SQL, YAML, scripts. */
  const files = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const file = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory())
        return ['node_modules', 'dist', '.git', '.data', 'results', 'coverage', 'fixtures'].includes(entry.name) ? [] : files(file);
      return /\.(ts|js|mjs|sql|ya?ml|py|sh)$/.test(entry.name) || entry.name === 'Dockerfile' ? [file] : [];
    });

  it('names only headings and anchors that the cited page has', () => {
    const anchors = new Map(DOCS.map((page) => [page, anchorsOf(page)]));
    // This file's own examples are not citations.
    const stale = files('')
      .filter((file) => file !== 'test/docs/links.unit.test.ts')
      .flatMap((file) => {
        const text = read(file);
        // A citation may break across a comment's lines: `docs/x.md` ending one, `"Heading"` opening the next.
        const byHeading = [
          ...text.matchAll(/(docs\/[\w-]+\.md)(?: |\n[ \t]*(?:\/\/|\*|#|--) ?)"([^"\n]+(?:\n[ \t]*(?:\/\/|\*|#|--) ?[^"\n]+)?)"/g),
        ].filter(([, page, heading]) => !anchors.get(page)?.has(slug(heading.replace(/\n[ \t]*(?:\/\/|\*|#|--) ?/g, ' '))));
        const byAnchor = [...text.matchAll(/(docs\/[\w-]+\.md)#([\w-]+)/g)].filter(([, page, anchor]) => !anchors.get(page)?.has(anchor));
        return [...byHeading, ...byAnchor].map((m) => `${file}: ${m[0]}`);
      });
    expect(stale).toEqual([]);
  });
});
