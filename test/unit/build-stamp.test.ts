// `npm start`'s build step (scripts/build-stamp.cjs) in a checkout of its own whose `npm run build` counts its runs:
// it builds when nothing was built, when a source or folder changed since, or after a failed build, and not otherwise.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'build-stamp.cjs');

let root: string;

/** A checkout whose build appends a line to `builds` (and fails while `fail` exists), bracketed as the real one is. */
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'build-stamp-'));
  const count = `node -e "if (require('fs').existsSync('fail')) process.exit(3); require('fs').appendFileSync('builds', 'built\\n')"`;
  const build = `node ${JSON.stringify(SCRIPT)} begin && ${count} && node ${JSON.stringify(SCRIPT)} end`;
  await writeFile(
    join(root, 'package.json'),
    JSON.stringify({
      name: 'fixture',
      version: '1.0.0',
      private: true,
      scripts: { build, 'ensure-build': `node ${JSON.stringify(SCRIPT)} ensure` },
    }),
  );
  await writeFile(join(root, 'tsconfig.json'), JSON.stringify({ include: ['src'] }));
  await mkdir(join(root, 'src', 'deep'), { recursive: true });
  await writeFile(join(root, 'src', 'deep', 'a.ts'), 'export const a = 1;\n');
  // Every file and folder as old as a clone made a minute ago.
  await age(['package.json', 'tsconfig.json', 'src', 'src/deep', 'src/deep/a.ts'], 60);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Sets the paths' modification times `secondsAgo` before now (what a clone, an edit or a checkout leaves). */
async function age(paths: string[], secondsAgo: number): Promise<void> {
  const when = new Date(Date.now() - secondsAgo * 1000);
  for (const p of paths) await utimes(join(root, p), when, when);
}

/** The stamp's time moved `secondsAgo` back, as if the last build had run then. */
async function builtAgo(secondsAgo: number): Promise<void> {
  await age(['dist/.build-stamp'], secondsAgo);
}

async function ensure(): Promise<{ code: number; said: string }> {
  // Through npm, as `npm start` runs it (npm_execpath set): the fixture's own `build` script is the one run.
  return run('npm', ['run', '--silent', 'ensure-build'], { cwd: root }).then(
    (r) => ({ code: 0, said: r.stderr }),
    (error: { code: number; stderr: string }) => ({ code: error.code, said: error.stderr }),
  );
}

async function builds(): Promise<number> {
  return (await readFile(join(root, 'builds'), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
}

test('a checkout never built builds once, saying why; a second start on that build does not build', async () => {
  const first = await ensure();
  expect(first).toEqual({
    code: 0,
    said: expect.stringContaining('build: no finished build in dist/; building (npm run build)…'),
  });
  expect(await builds()).toBe(1);
  expect((await stat(join(root, 'dist', '.build-stamp'))).isFile()).toBe(true);

  const second = await ensure();
  expect(second.code).toBe(0);
  expect(second.said.trim().split('\n')).toEqual([
    'build: dist/ is up to date with the sources; not rebuilding (npm run build forces one)',
  ]);
  expect(await builds()).toBe(1);
});

test('a source edited after the build builds again, naming it; so do a new file and a changed package.json', async () => {
  await ensure();
  await builtAgo(30);

  await age(['src/deep/a.ts'], 10);
  expect((await ensure()).said).toContain('build: src/deep/a.ts changed since the last build; building');
  expect(await builds()).toBe(2);
  expect((await ensure()).said).toContain('up to date');

  await builtAgo(30);
  await writeFile(join(root, 'src', 'b.ts'), 'export const b = 2;\n');
  await age(['src/b.ts', 'src'], 10);
  expect((await ensure()).said).toMatch(/build: src(\/b\.ts)? changed since the last build/);
  expect(await builds()).toBe(3);

  await builtAgo(30);
  await age(['package.json'], 10);
  expect((await ensure()).said).toContain('build: package.json changed since the last build');
  expect(await builds()).toBe(4);
});

test('a failed build fails the start and leaves the checkout to be built next time', async () => {
  await ensure();
  await builtAgo(30);
  await age(['src/deep/a.ts'], 10);
  await writeFile(join(root, 'fail'), '');
  expect((await ensure()).code).not.toBe(0);
  expect(await builds()).toBe(1);

  await rm(join(root, 'fail'));
  expect((await ensure()).said).toContain('src/deep/a.ts changed since the last build');
  expect(await builds()).toBe(2);
});
