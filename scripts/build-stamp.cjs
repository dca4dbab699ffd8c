// `npm start`'s build step: build only when a source is newer than the last finished build (plain JavaScript, since it
// runs before anything is compiled). `begin` and `end` bracket `npm run build`; `ensure` is the prestart step.
//   node scripts/build-stamp.cjs begin    notes when a build begins (dist/.build-started)
//   node scripts/build-stamp.cjs end      the build finished: that note becomes dist/.build-stamp, its time the begin's
//   node scripts/build-stamp.cjs ensure   runs `npm run build` if a source changed since the stamp; says which, on one line
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = process.cwd();
const dist = path.join(root, 'dist');
const STARTED = path.join(dist, '.build-started');
const STAMP = path.join(dist, '.build-stamp');
/** Besides the folders tsconfig.json compiles: what changes the build's output (the lock file: the bundled stdio server). */
const BUILD_FILES = ['tsconfig.json', 'package.json', 'package-lock.json'];

/** The folders `tsc` compiles, from tsconfig.json's `include`. */
function sourceFolders() {
  const tsconfig = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
  return tsconfig.include ?? ['.'];
}

/**
 * The first path (file or folder: a folder's time changes when a file in it is added, removed or renamed) modified
 * after `since` (ms), or null. Stops at the first one: an up-to-date checkout reads every entry once.
 */
function newerThan(since) {
  for (const file of BUILD_FILES) {
    const stat = fs.statSync(path.join(root, file), { throwIfNoEntry: false });
    if (stat && stat.mtimeMs > since) return file;
  }
  const pending = sourceFolders().map((folder) => path.join(root, folder));
  while (pending.length > 0) {
    const at = pending.pop();
    const stat = fs.statSync(at, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.mtimeMs > since) return path.relative(root, at) || '.';
    if (!stat.isDirectory()) continue;
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      pending.push(path.join(at, entry.name));
    }
  }
  return null;
}

/** Why a build is needed, or null when dist/ is up to date. */
function staleness() {
  const stamp = fs.statSync(STAMP, { throwIfNoEntry: false });
  if (!stamp) return 'no finished build in dist/';
  const changed = newerThan(stamp.mtimeMs);
  return changed ? `${changed} changed since the last build` : null;
}

function ensure() {
  const why = staleness();
  if (!why) {
    process.stderr.write('build: dist/ is up to date with the sources; not rebuilding (npm run build forces one)\n');
    return 0;
  }
  process.stderr.write(`build: ${why}; building (npm run build)…\n`);
  // Under npm, npm_execpath is the npm that runs us; otherwise the npm on PATH.
  const npm = process.env.npm_execpath;
  const result = npm
    ? spawnSync(process.execPath, [npm, 'run', '--silent', 'build'], { stdio: 'inherit' })
    : spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  return result.status ?? 1;
}

function main(command) {
  switch (command) {
    case 'begin':
      fs.mkdirSync(dist, { recursive: true });
      fs.writeFileSync(STARTED, `${new Date().toISOString()}\n`);
      return 0;
    case 'end':
      // The stamp carries the begin's time, so a source saved while the build ran is newer and builds next time.
      fs.renameSync(STARTED, STAMP);
      return 0;
    case 'ensure':
      return ensure();
    default:
      process.stderr.write('usage: node scripts/build-stamp.cjs begin | end | ensure\n');
      return 2;
  }
}

process.exitCode = main(process.argv[2]);
