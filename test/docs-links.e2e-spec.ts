import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { GENERATED_DOCS_TEXT } from '../src/cli/openapi-export';

/**
 * The documentation works in a standalone clone: every relative link and anchor resolves to a
 * file and heading of the repository, nothing points outside it except public web sites, the
 * README stays a short front door, and no document speaks of issue numbers.
 */

const ROOT = resolve(__dirname, '..');
const README_MAX_BYTES = 8192;
/** docs/: every page short enough to read at once, and the whole within reach (hand-written text). */
const PAGE_MAX_BYTES = 20 * 1024;
const DOCS_MAX_BYTES = 125 * 1024;
/** A path of the repository written in backticks: `src/pets/pets.service.ts`, `test/support/`. */
const REPO_PATH = /`((?:src|test|tools|bench|deploy|clients|docs)\/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])`/g;

function markdownUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const DOCUMENTS = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...markdownUnder('docs')].sort();

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/**
 * What people wrote: the text `npm run openapi:export` generates (the error table, a row longer
 * with each code a module declares) is not counted, so that generating a module cannot break the budget.
 */
const handWrittenBytes = (markdown: string): number =>
  Buffer.byteLength(markdown.replace(GENERATED_DOCS_TEXT, ''));

/** The text outside fenced code blocks, line by line (fenced lines become empty). */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence === undefined && marker) {
      fence = marker[0];
      return '';
    }
    if (fence !== undefined) {
      if (marker && marker[0] === fence) fence = undefined;
      return '';
    }
    return line;
  });
}

/** Code spans say things like `Link: </docs>`; they are text, not links. */
const withoutCodeSpans = (line: string): string => line.replace(/(`+)[\s\S]*?\1/g, 'code');

/** GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to -. */
export function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a document's headings give, numbered as GitHub numbers repeats (-1, -2, ...). */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(read(path))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = githubAnchor(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  document: string;
  line: number;
  target: string;
}

/** Inline links `[text](target)`, images included, and autolinks `<scheme:...>`. */
function linksOf(document: string): Link[] {
  const links: Link[] = [];
  proseLines(read(document)).forEach((raw, index) => {
    const line = withoutCodeSpans(raw);
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ document, line: index + 1, target: match[1] });
    }
    for (const match of line.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)) {
      links.push({ document, line: index + 1, target: match[1] });
    }
  });
  return links;
}

const PRIVATE_HOST =
  /^(localhost|.*\.localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(1[6-9]|2\d|3[01])\.\d+\.\d+|\[::1?\]|.*\.(local|internal|test|example|invalid))$/i;

/** What is wrong with a link, or undefined when it resolves. */
function problemWith(link: Link): string | undefined {
  const { document, target } = link;
  if (target === '') return 'empty link';
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    if (!/^https?:\/\//i.test(target)) return 'only http(s) links may leave the repository';
    const host = new URL(target).hostname;
    return PRIVATE_HOST.test(host) ? `${host} is not a public site` : undefined;
  }
  if (target.startsWith('/') || target.startsWith('\\') || isAbsolute(target)) {
    return 'an absolute path is not in a clone of the repository';
  }
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file = pathPart === '' ? join(ROOT, document) : resolve(ROOT, dirname(document), pathPart);
  const inRepo = relative(ROOT, file);
  if (inRepo.startsWith('..') || isAbsolute(inRepo)) return 'leaves the repository';
  if (inRepo.split(sep).some((part) => ['node_modules', 'dist', '.git', 'data', 'coverage'].includes(part))) {
    return 'points at a generated or ignored folder';
  }
  if (!existsSync(file)) return `${inRepo} does not exist`;
  if (anchor === undefined) return undefined;
  if (!statSync(file).isFile() || !file.endsWith('.md'))
    return `an anchor into ${inRepo}, which is not Markdown`;
  return anchorsOf(inRepo).has(anchor) ? undefined : `${inRepo} has no heading #${anchor}`;
}

describe('documentation', () => {
  it('covers the expected documents', () => {
    expect(DOCUMENTS).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/api.md',
        'docs/configuration.md',
        'docs/operations.md',
        'docs/testing.md',
        'docs/extending.md',
        'docs/performance.md',
      ]),
    );
  });

  it('README.md links every document under docs/', () => {
    const targets = new Set(linksOf('README.md').map((link) => link.target.split('#')[0]));
    const unlinked = DOCUMENTS.filter((doc) => doc.startsWith('docs/') && !targets.has(doc));
    expect(unlinked).toEqual([]);
  });

  it.each(DOCUMENTS)('%s: every link resolves inside the repository or to a public site', (document) => {
    const links = linksOf(document);
    const broken = links
      .map((link) => ({ link, problem: problemWith(link) }))
      .filter(({ problem }) => problem !== undefined)
      .map(({ link, problem }) => `${link.document}:${link.line} (${link.target}): ${problem}`);

    expect(broken).toEqual([]);
  });

  it.each(DOCUMENTS)('%s: every repository path it names in backticks exists', (document) => {
    const missing = proseLines(read(document)).flatMap((line, index) =>
      [...line.matchAll(REPO_PATH)]
        .map(([, path]) => path.replace(/\/$/, ''))
        .filter((path) => !/[*<>]/.test(path) && !existsSync(join(ROOT, path)))
        .map((path) => `${document}:${index + 1}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it(`docs/ holds at most ${DOCS_MAX_BYTES / 1024} KB, no page over ${PAGE_MAX_BYTES / 1024} KB, of hand-written text`, () => {
    const pages = DOCUMENTS.filter((doc) => /^docs\/[^/]+\.md$/.test(doc));
    const sizes = pages.map((page) => ({ page, bytes: handWrittenBytes(read(page)) }));
    expect(sizes.filter(({ bytes }) => bytes > PAGE_MAX_BYTES)).toEqual([]);
    expect(sizes.reduce((sum, { bytes }) => sum + bytes, 0)).toBeLessThanOrEqual(DOCS_MAX_BYTES);
  });

  it(`README.md is at most ${README_MAX_BYTES} bytes`, () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it.each(DOCUMENTS)('%s names no issue numbers', (document) => {
    const mentions = read(document)
      .split('\n')
      .map((line, index) => ({ line: index + 1, match: /\bissues?\s+#?\d+|\(#\d+\)/i.exec(line)?.[0] }))
      .filter(({ match }) => match !== undefined)
      .map(({ line, match }) => `${document}:${line}: ${match}`);

    expect(mentions).toEqual([]);
  });
});

describe('the link checker', () => {
  const check = (target: string, document = 'docs/api.md') => problemWith({ document, line: 1, target });

  it('computes anchors the way GitHub does', () => {
    expect(githubAnchor('Pagination: Link rel="next"')).toBe('pagination-link-relnext');
    expect(githubAnchor('Retrying creates: Idempotency-Key')).toBe('retrying-creates-idempotency-key');
    expect(githubAnchor('Running on PostgreSQL, several instances')).toBe(
      'running-on-postgresql-several-instances',
    );
    expect(githubAnchor('`<module>.schema.ts` and snake_case')).toBe('moduleschemats-and-snake_case');
  });

  it('accepts what resolves', () => {
    expect(check('operations.md#api-keys-for-operators')).toBeUndefined();
    expect(check('#errors')).toBeUndefined();
    expect(check('../openapi.yaml')).toBeUndefined();
    expect(check('spec/')).toBeUndefined();
    expect(check('https://keepachangelog.com/en/1.1.0/')).toBeUndefined();
  });

  it('refuses what does not', () => {
    expect(check('operations.md#no-such-heading')).toMatch(/no heading/);
    expect(check('#no-such-heading')).toMatch(/no heading/);
    expect(check('missing.md')).toMatch(/does not exist/);
    expect(check('../../shared/spec/decisions.md')).toMatch(/leaves the repository/);
    expect(check('/work/shared/spec/decisions.md')).toMatch(/absolute path/);
    expect(check('file:///etc/passwd')).toMatch(/only http/);
    expect(check('http://localhost:3000/docs')).toMatch(/not a public site/);
    expect(check('../node_modules/typeorm/package.json')).toMatch(/generated or ignored/);
  });

  it('counts no generated text against the size budget: more error codes leave it as it was', () => {
    const api = read('docs/api.md');
    const row = '| 422 | `unknown_store_order` | `storeOrderId` names no store order |\n';
    const grown = api.replace('| 500 | `internal_error`', `${row.repeat(1000)}| 500 | \`internal_error\``);

    expect(Buffer.byteLength(grown)).toBeGreaterThan(Buffer.byteLength(api) + 50_000);
    expect(handWrittenBytes(grown)).toBe(handWrittenBytes(api));
    expect(handWrittenBytes(api)).toBeLessThan(Buffer.byteLength(api) - 2000);
  });

  it('finds links outside code only', () => {
    expect(withoutCodeSpans('see `[x](nowhere.md)` and [y](there.md)')).toBe('see code and [y](there.md)');
    expect(proseLines('a\n```sh\n[x](nowhere.md)\n```\nb')).toEqual(['a', '', '', '', 'b']);
  });
});
