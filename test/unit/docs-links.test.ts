// The docs as a reader follows them: every relative link in README.md and docs/**/*.md reaches a file that exists,
// and every #anchor a heading (or an explicit anchor) of the file it points into.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { anchorsOf, linksOf } from '../helpers/markdown';

const ROOT = resolve(__dirname, '..', '..');

/** README.md and every markdown file under docs/. */
function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name));
  return [join(ROOT, 'README.md'), ...docs].sort();
}

const anchorCache = new Map<string, Set<string>>();
const anchorsIn = (file: string) => {
  if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
  return anchorCache.get(file)!;
};

/** What is wrong with one link from `file`, or null when it holds. */
function brokenLink(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: … are not ours to check
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const to = pathPart === '' ? file : resolve(dirname(file), pathPart);
  if (!to.startsWith(ROOT)) return `${target}: leaves the repository`;
  if (!existsSync(to)) return `${target}: no such file ${relative(ROOT, to)}`;
  if (anchor === null || anchor === '') return null;
  if (statSync(to).isDirectory() || !to.endsWith('.md'))
    return `${target}: an anchor into something that is not a markdown file`;
  return anchorsIn(to).has(anchor) ? null : `${target}: no heading with anchor #${anchor} in ${relative(ROOT, to)}`;
}

test('the docs exist: README.md and an index of docs/', () => {
  expect(docFiles().map((f) => relative(ROOT, f))).toEqual(
    expect.arrayContaining(['README.md', join('docs', 'README.md')]),
  );
});

test('every relative link and anchor in README.md and docs/ points at a file and heading that exist', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of docFiles()) {
    for (const link of linksOf(readFileSync(file, 'utf8'))) {
      checked += 1;
      const broken = brokenLink(file, link.target);
      if (broken) problems.push(`${relative(ROOT, file)}:${link.line}: ${broken}`);
    }
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(50);
});

test('every page under docs/ is reachable from the docs index', () => {
  const index = join(ROOT, 'docs', 'README.md');
  const linked = new Set(
    linksOf(readFileSync(index, 'utf8')).map((l) => resolve(dirname(index), l.target.split('#')[0]!)),
  );
  const unlisted = docFiles().filter((f) => f.startsWith(join(ROOT, 'docs')) && f !== index && !linked.has(f));
  expect(unlisted.map((f) => relative(ROOT, f))).toEqual([]);
});
